; inherits: markdown

; Chat documents are Markdown: inline Markdown, and code blocks in their own language, as in
; Helix's markdown queries. tool-call and tool-result blocks name no language Helix knows, so
; they stay plain and take their colours from highlights.scm.
