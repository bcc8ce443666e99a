; inherits: markdown

; Chat documents are Markdown: inline Markdown, and code blocks in their own language, as in
; Helix's markdown queries.

; A tool call's arguments are JSON.
((fenced_code_block
   (info_string
     (language) @_lang)
   (code_fence_content) @injection.content)
 (#eq? @_lang "tool-call")
 (#set! injection.language "json")
 (#set! injection.include-unnamed-children))
