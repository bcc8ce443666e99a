//! libFuzzer target: any bytes, then a valid frame, through the LSP frame decoder. The valid
//! frame must come out last, and between pushes the decoder holds at most a header or a body
//! under the frame cap. The decoder's source is compiled in as it is (it is private to
//! cairn-lsp), so this fuzzes the exact code the server runs.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../server/cairn-lsp/src/transport.rs"]
#[allow(dead_code)]
mod transport;

const PING: &[u8] = br#"{"jsonrpc":"2.0","id":"sentinel","method":"cairn/tools"}"#;
const MAX: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let frame = [
        format!("Content-Length: {}\r\n\r\n", PING.len()).as_bytes(),
        PING,
    ]
    .concat();
    // The first byte picks the size of the pieces the input arrives in.
    let (size, data) = match data.split_first() {
        Some((size, rest)) => (usize::from(*size).max(1), rest),
        None => (1, data),
    };
    let mut decoder = transport::Decoder::new(MAX);
    let mut last = None;
    for piece in data.chunks(size).chain(std::iter::once(frame.as_slice())) {
        decoder.push(piece);
        while let Some(decoded) = decoder.decode() {
            if let transport::Decoded::Message(body) = decoded {
                last = Some(body);
            }
        }
        assert!(decoder.buffered() <= transport::MAX_HEADER.max(MAX));
    }
    assert_eq!(last.as_deref(), Some(PING));
});
