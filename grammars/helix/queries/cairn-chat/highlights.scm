; inherits: markdown

; cairn's chat documents (.cairn/chats/*.md, docs/chat-documents.md) on Helix's markdown grammar.
; Helix lets a later pattern win over an earlier one for the same node, so these come after the
; inherited Markdown patterns. They use scopes every theme colours (diff, info, warning, error,
; keyword, function, comment), so the turns and tool blocks stand out whatever the theme.

; `## You`: your turns.
((atx_heading
   (atx_h2_marker) @diff.plus
   heading_content: (inline) @_role @diff.plus)
 (#match? @_role "^You[ \t]*$"))

; `## cairn`: cairn's turns.
((atx_heading
   (atx_h2_marker) @info
   heading_content: (inline) @_role @info)
 (#match? @_role "^cairn[ \t]*$"))

; ```tool-call NAME: the call; the word `tool-call` as a keyword, the tool's name as a function.
(fenced_code_block
  (info_string
    (language) @keyword) @function
  (#eq? @keyword "tool-call"))

; ```tool-result ok: what the tool gave back, dimmed like a comment.
(fenced_code_block
  (info_string
    (language) @keyword) @_info @diff.plus
  (code_fence_content)? @comment
  (#eq? @keyword "tool-result")
  (#match? @_info "^tool-result[ \t]+ok"))

; ```tool-result error: a failed or refused call.
(fenced_code_block
  (info_string
    (language) @keyword) @_info @diff.minus
  (code_fence_content)? @diff.minus
  (#eq? @keyword "tool-result")
  (#match? @_info "^tool-result[ \t]+error"))

; Event lines: `> cairn asks: ...`, `> allowed once`, `> denied`, `> error: ...` and the like.
(block_quote
  (paragraph
    (inline) @warning)
  (#match? @warning "^cairn asks:"))

(block_quote
  (paragraph
    (inline) @diff.plus)
  (#match? @diff.plus "^(allowed once|allowed for this session|edited )"))

(block_quote
  (paragraph
    (inline) @diff.minus)
  (#match? @diff.minus "^(denied|edit of .* rejected)"))

(block_quote
  (paragraph
    (inline) @warning)
  (#match? @warning "^cancelled"))

(block_quote
  (paragraph
    (inline) @error)
  (#match? @error "^error:"))

; A plan, a sub-agent's steps, a hook that let a call through, a compaction: dimmed.
(block_quote
  (paragraph
    (inline) @comment)
  (#match? @comment "^(plan \\(|sub-agent: |compacted: |hook (allowed|asked|output) )"))

; A hook that failed or denied a call: a warning, never silent.
(block_quote
  (paragraph
    (inline) @warning)
  (#match? @warning "^hook (failed|denied) "))
