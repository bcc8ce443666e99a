" Chat documents (docs/chat-documents.md): Markdown files directly in a .cairn/chats directory.
autocmd BufRead,BufNewFile */.cairn/chats/*.md set filetype=cairnchat
