" Vim syntax file
" Language:    cairn chat document (docs/chat-documents.md)
" Maintainer:  cairn
" Filenames:   .cairn/chats/*.md, the cairn://chat buffer of the Neovim plugin
"
" A chat document is Markdown with a few fixed pieces: the role headings `## You` and
" `## cairn`, fenced ```tool-call NAME and ```tool-result ok|error blocks, and `> ` event lines.
" The same file ships as editors/neovim/syntax/cairnchat.vim (a test checks they are equal).

if exists("b:current_syntax")
  finish
endif

" Everything else is ordinary Markdown.
runtime! syntax/markdown.vim
unlet! b:current_syntax

syn case match

" Role headings: the whole line, trailing spaces allowed.
syn match cairnChatYou    /^## You\s*$/
syn match cairnChatCairn  /^## cairn\s*$/

" Tool blocks. The fence line names the tool or the status; the body is shown plainly.
syn region cairnChatToolCall matchgroup=cairnChatToolCallFence
      \ start=/^```tool-call\>/ end=/^```\s*$/ keepend contains=cairnChatToolName,cairnChatJsonKey,cairnChatJsonString
" The tool's name follows the start match, so it is inside the region.
syn match cairnChatToolName /\%(^```tool-call \)\@<=\S\+/ contained
syn match cairnChatJsonKey /"[^"]*"\ze\s*:/ contained
syn match cairnChatJsonString /:\s*\zs"\%([^"\\]\|\\.\)*"/ contained

syn region cairnChatToolResultOk matchgroup=cairnChatToolResultOkFence
      \ start=/^```tool-result ok\s*$/ end=/^```\s*$/ keepend contains=cairnChatMore
syn region cairnChatToolResultError matchgroup=cairnChatToolResultErrorFence
      \ start=/^```tool-result error\s*$/ end=/^```\s*$/ keepend contains=cairnChatMore
syn match cairnChatMore /^… (\d\+ more lines)$/ contained

" Event lines reported by cairn.
syn match cairnChatAsk     /^> cairn asks: .*$/
syn match cairnChatAllowed /^> allowed \%(once\|for this session\)\s*$/
syn match cairnChatDenied  /^> denied\s*$/
syn match cairnChatEdited  /^> edited .*$/
syn match cairnChatRejected /^> edit of .* rejected.*$/
syn match cairnChatCancel  /^> \%(cancelled\|interrupted\>\).*$/
syn match cairnChatError   /^> error: .*$/
" A plan (`[x]` done, `[~]` in progress, `[ ]` pending), hooks, a sub-agent's steps, compaction.
syn match cairnChatPlan     /^> plan (\d\+\/\d\+ done):\s*$/
syn match cairnChatStepDone /^> - \[x\] .*$/
syn match cairnChatStepNow  /^> - \[\~\] .*$/
syn match cairnChatStepTodo /^> - \[ \] .*$/
syn match cairnChatHook     /^> hook \%(allowed\|asked\|output\) .*$/
syn match cairnChatHookBad  /^> hook \%(failed\|denied\) .*$/
syn match cairnChatSub      /^> sub-agent: .*$/
syn match cairnChatCompacted /^> compacted: .*$/
" The Neovim chat buffer's folded lines: a sub-agent's steps, a compaction's summary.
syn match cairnChatNested   /^  ↳ .*$/

hi def link cairnChatYou                 Title
hi def link cairnChatCairn               Identifier
hi def link cairnChatToolCallFence       PreProc
hi def link cairnChatToolName            Function
hi def link cairnChatJsonKey             Identifier
hi def link cairnChatJsonString          String
hi def link cairnChatToolCall            Normal
hi def link cairnChatToolResultOkFence   PreProc
hi def link cairnChatToolResultOk        Comment
hi def link cairnChatToolResultErrorFence ErrorMsg
hi def link cairnChatToolResultError     WarningMsg
hi def link cairnChatMore                NonText
hi def link cairnChatAsk                 Question
hi def link cairnChatAllowed             DiffAdd
hi def link cairnChatDenied              WarningMsg
hi def link cairnChatEdited              Special
hi def link cairnChatRejected            WarningMsg
hi def link cairnChatCancel              WarningMsg
hi def link cairnChatError               ErrorMsg
hi def link cairnChatPlan                Title
hi def link cairnChatStepDone            DiffAdd
hi def link cairnChatStepNow             Todo
hi def link cairnChatStepTodo            Normal
hi def link cairnChatHook                Comment
hi def link cairnChatHookBad             WarningMsg
hi def link cairnChatSub                 Comment
hi def link cairnChatCompacted           Comment
hi def link cairnChatNested              Comment

let b:current_syntax = "cairnchat"
