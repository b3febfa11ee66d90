//! The first byte read from the tables against libzstd's own decode (zstd-sys, the library the
//! core links), on frames libzstd writes at several levels from contents whose first block's
//! literals are Huffman-coded with FSE-coded weights (text, skewed bytes) or directly written
//! ones (few symbols), and on frames with bytes flipped in their tables (no panic).

use cqlsh_ext_core::zstd::first_byte;

/// xorshift64*: contents that do not depend on a crate's random generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn content(rng: &mut Rng) -> Vec<u8> {
    let n = 1 + rng.below(5000) as usize;
    match rng.below(5) {
        0 => {
            let mut text = Vec::new();
            while text.len() < n {
                let i = rng.below(1000);
                text.extend_from_slice(
                    format!("{{\"id\": {i}, \"status\": \"PAID\", \"note\": \"n{}\"}}, ", i * 7).as_bytes(),
                );
            }
            text
        }
        // skewed: byte b about twice as likely as b + 1 (rate r), few or many symbols weigh
        1 => {
            let rate = [1, 4, 16][rng.below(3) as usize];
            (0..n).map(|_| (rng.next().trailing_zeros() as u64 * 16 / rate + rng.below(3)) as u8).collect()
        }
        2 => (0..n).map(|_| rng.next() as u8).collect(),
        3 => (0..n).map(|_| b"ab{}"[rng.below(4) as usize]).collect(),
        _ => (0..n).map(|_| (rng.below(40) + rng.below(40)) as u8).collect(),
    }
}

fn compress(content: &[u8], level: i32) -> Vec<u8> {
    let mut out = vec![0u8; unsafe { zstd_sys::ZSTD_compressBound(content.len()) }];
    let n = unsafe {
        zstd_sys::ZSTD_compress(
            out.as_mut_ptr().cast(),
            out.len(),
            content.as_ptr().cast(),
            content.len(),
            level,
        )
    };
    assert_eq!(unsafe { zstd_sys::ZSTD_isError(n) }, 0);
    out.truncate(n);
    out
}

fn decompressed_first(frame: &[u8]) -> Option<u8> {
    let mut out = vec![0u8; 1 << 17];
    let n = unsafe {
        zstd_sys::ZSTD_decompress(out.as_mut_ptr().cast(), out.len(), frame.as_ptr().cast(), frame.len())
    };
    (unsafe { zstd_sys::ZSTD_isError(n) } == 0 && n > 0).then(|| out[0])
}

#[test]
fn the_first_byte_is_libzstd_s() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut told = 0;
    let levels = [-7, -1, 1, 3, 6, 9, 19];
    for _ in 0..2000 {
        let content = content(&mut rng);
        let frame = compress(&content, levels[rng.below(levels.len() as u64) as usize]);
        let first = first_byte(&frame);
        assert!(first.is_none() || first == Some(content[0]), "{frame:02x?}");
        told += first.is_some() as usize;
    }
    assert_eq!(told, 2000); // every frame of these (no checksum, no dictionary) is told
}

#[test]
fn flipped_bytes_never_panic_and_agree_with_libzstd_where_it_decodes() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for _ in 0..3000 {
        let mut frame = compress(&content(&mut rng), [1, 3, 9][rng.below(3) as usize]);
        for _ in 0..1 + rng.below(3) {
            let at = 4 + rng.below(frame.len().min(60) as u64 - 4) as usize;
            frame[at] ^= 1 << rng.below(8);
        }
        for cut in [frame.len(), frame.len() / 2, 12] {
            let first = first_byte(&frame[..cut.min(frame.len())]);
            // (libzstd may decode a frame the tables' reading refuses: a table it reads alike)
            if let (Some(first), Some(decoded)) = (first, decompressed_first(&frame)) {
                if cut == frame.len() {
                    assert_eq!(first, decoded, "{frame:02x?}");
                }
            }
        }
    }
}
