//! A cache of object "shapes": the canonical key order and pre-rendered `,"key":` bytes of
//! dicts built from the same key objects.
//!
//! Wire documents repeat shapes (500 bars with the same seven keys, 60 typed values with the
//! same three), and from one call to the next the keys are usually the very same `str` objects
//! (literals in the producing code are interned). When a dict's key objects are identical, in
//! iteration order, to a cached shape's, its sorted order and canonical bytes are reused: no
//! UTF-8 lookups, escape checks, sorting or type checks per key.
//!
//! Identity is object address. The cache outlives a call, so it owns a reference to every key
//! of every cached shape (taken and released by `walk.rs`, which owns all reference counting):
//! a cached address therefore cannot be reused by another object, and an exact `str` never
//! changes its text. This module only stores addresses; it never dereferences them.

use std::cell::Cell;
use std::rc::Rc;

use pyo3::ffi;
use spine_core::CanonicalWriter;

/// Dicts with more keys than this are not cached (a lookup compares every key address).
pub const MAX_SHAPE_KEYS: usize = 256;

/// Cached prefixes are stored padded to this width, so each is written with one fixed-width
/// copy.
const PREFIX_WIDTH: usize = 32;

/// Direct-mapped slots (a power of two).
const SLOTS: usize = 64;

/// A borrowed (key, value) pair from `PyDict_Next`.
pub type Entry = (*mut ffi::PyObject, *mut ffi::PyObject);

/// One key of a shape, in canonical order.
#[derive(Debug)]
#[repr(C, align(16))]
struct Member {
    /// The prefix, padded; for longer prefixes only the first `PREFIX_WIDTH` bytes.
    prefix: [u8; PREFIX_WIDTH],
    /// Position of this key in the dict's iteration order.
    index: u32,
    /// Length of the prefix; where it starts in `rendered`.
    len: u32,
    start: u32,
    leaf: Leaf,
}

/// The value last met under one key of a shape, for sibling dicts that repeat it (the same
/// `"DECIMAL"` or `4` object in every row of a page).
///
/// Valid within one walk only: `seen` carries the walk's number, and an address is trusted
/// only while that walk keeps its object alive (no Python code runs during a walk, and the
/// root holds every object). So no reference is taken, and entries from earlier walks simply
/// never match.
#[derive(Debug, Default)]
struct Leaf {
    /// (walk number, address) of the value last met under this key.
    seen: Cell<(u64, usize)>,
    /// Its canonical bytes once it repeated; length 0 while not rendered.
    len: Cell<u8>,
    bytes: Cell<[u8; PREFIX_WIDTH]>,
}

/// What a shape member knows about the value under its key.
pub enum LeafHit {
    /// The same object as before in this walk, already rendered: these bytes (padded), this
    /// long.
    Rendered([u8; PREFIX_WIDTH], usize),
    /// The same object as the last one, not yet rendered: render it and `remember` the bytes.
    Repeated,
    /// Another object.
    New,
}

/// One cached shape.
#[derive(Debug)]
pub struct Shape {
    ids: Box<[usize]>,
    /// Keys in canonical order, each with its prefix inline (no indirection to write it).
    members: Box<[Member]>,
    /// All prefixes `{"k1":`, `,"k2":`, ... back to back, for those longer than
    /// `PREFIX_WIDTH`.
    rendered: Vec<u8>,
}

impl Shape {
    /// Build a shape from the dict's key addresses (iteration order) and its keys in canonical
    /// order, each with its iteration index.
    #[must_use]
    pub fn new<'k>(ids: Box<[usize]>, sorted: impl Iterator<Item = (usize, &'k str)>) -> Self {
        let mut rendered = Vec::new();
        let mut members = Vec::with_capacity(ids.len());
        for (n, (index, key)) in sorted.enumerate() {
            let start = rendered.len();
            rendered.push(if n == 0 { b'{' } else { b',' });
            spine_core::json::write_string(&mut rendered, key);
            rendered.push(b':');
            let mut prefix = [0u8; PREFIX_WIDTH];
            let shown = &rendered[start..];
            let head = shown.len().min(PREFIX_WIDTH);
            prefix[..head].copy_from_slice(&shown[..head]);
            members.push(Member {
                prefix,
                index: u32::try_from(index).unwrap_or(u32::MAX),
                len: u32::try_from(shown.len()).unwrap_or(u32::MAX),
                start: u32::try_from(start).unwrap_or(u32::MAX),
                leaf: Leaf::default(),
            });
        }
        Self {
            ids,
            members: members.into_boxed_slice(),
            rendered,
        }
    }

    /// Key addresses in iteration order.
    #[must_use]
    pub fn ids(&self) -> &[usize] {
        &self.ids
    }

    /// Number of keys.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.members.len()
    }

    /// For each key in canonical order: its iteration index, and a writer of its prefix
    /// (`{` or `,`, the key, `:`).
    #[inline(always)]
    pub fn members(&self) -> impl Iterator<Item = (usize, Prefix<'_>)> {
        self.members.iter().map(move |m| {
            (
                m.index as usize,
                Prefix {
                    shape: self,
                    member: m,
                },
            )
        })
    }
}

/// One key's prefix, ready to write.
#[derive(Clone, Copy)]
pub struct Prefix<'s> {
    shape: &'s Shape,
    member: &'s Member,
}

impl Prefix<'_> {
    /// Look up the value under this key by its address, in walk number `walk` (never 0).
    #[inline(always)]
    pub fn leaf(self, walk: u64, value: usize) -> LeafHit {
        let leaf = &self.member.leaf;
        if leaf.seen.get() == (walk, value) {
            match leaf.len.get() {
                0 => LeafHit::Repeated,
                len => LeafHit::Rendered(leaf.bytes.get(), usize::from(len)),
            }
        } else {
            leaf.seen.set((walk, value));
            leaf.len.set(0);
            LeafHit::New
        }
    }

    /// Remember the canonical bytes of the value last looked up (if they fit).
    pub fn remember(self, bytes: &[u8]) {
        let n = bytes.len();
        if (1..=PREFIX_WIDTH).contains(&n) {
            let mut padded = [0u8; PREFIX_WIDTH];
            padded[..n].copy_from_slice(bytes);
            self.member.leaf.bytes.set(padded);
            self.member.leaf.len.set(u8::try_from(n).unwrap_or(0));
        }
    }

    /// Write the prefix.
    #[inline(always)]
    pub fn write(self, out: &mut CanonicalWriter) {
        let len = self.member.len as usize;
        if len <= PREFIX_WIDTH {
            out.raw_padded(&self.member.prefix, len);
        } else {
            let start = self.member.start as usize;
            out.raw(
                self.shape
                    .rendered
                    .get(start..start + len)
                    .unwrap_or_default(),
            );
        }
    }
}

/// How many key addresses a slot holds inline, so that most lookups compare without chasing a
/// pointer (64 bytes a slot).
const INLINE_IDS: usize = 6;

#[derive(Debug, Default, Clone)]
struct Slot {
    len: usize,
    ids: [usize; INLINE_IDS],
    shape: Option<Rc<Shape>>,
}

/// A direct-mapped cache of shapes keyed by key count and first and last key, plus a filter of
/// fingerprints of key sequences seen once, so that a shape is built only when it repeats.
#[derive(Debug)]
pub struct KeyShapes {
    slots: Box<[Slot]>,
    seen: Box<[u64]>,
}

impl Default for KeyShapes {
    fn default() -> Self {
        Self {
            slots: vec![Slot::default(); SLOTS].into_boxed_slice(),
            seen: vec![0; SLOTS].into_boxed_slice(),
        }
    }
}

#[inline(always)]
fn slot_of(len: usize, first: usize, last: usize) -> usize {
    let h = (first ^ last.rotate_left(23) ^ len) as u64;
    // Fibonacci hashing: the top bits of the product mix every input bit.
    (h.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize
}

#[inline(always)]
fn key_id(entry: &Entry) -> usize {
    entry.0 as usize
}

impl KeyShapes {
    #[inline(always)]
    fn slot(entries: &[Entry]) -> Option<usize> {
        let first = key_id(entries.first()?);
        let last = key_id(entries.last()?);
        Some(slot_of(entries.len(), first, last))
    }

    /// The cached shape for exactly these key objects in this order, if any.
    #[must_use]
    #[inline(always)]
    pub fn get(&self, entries: &[Entry]) -> Option<Rc<Shape>> {
        let slot = self.slots.get(Self::slot(entries)?)?;
        if slot.len != entries.len() {
            return None;
        }
        let (head, rest) = entries.split_at(entries.len().min(INLINE_IDS));
        let shape = slot.shape.as_ref()?;
        let same = slot.ids.iter().zip(head).all(|(id, e)| *id == key_id(e))
            && shape.ids[head.len()..]
                .iter()
                .zip(rest)
                .all(|(id, e)| *id == key_id(e));
        same.then(|| Rc::clone(shape))
    }

    /// Whether this key sequence was met before without a shape being built; remembers it if
    /// not. A one-off dict (fresh keys every call) thus never pays for building a shape.
    pub fn seen_before(&mut self, entries: &[Entry]) -> bool {
        let Some(slot) = Self::slot(entries) else {
            return false;
        };
        let fingerprint = entries.iter().fold(entries.len() as u64, |h, e| {
            (h.rotate_left(5) ^ key_id(e) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        }) | 1;
        if self.seen[slot] == fingerprint {
            true
        } else {
            self.seen[slot] = fingerprint;
            false
        }
    }

    /// Cache a shape, returning it and the shape it displaced (whose key references the caller
    /// releases).
    pub fn put(&mut self, shape: Shape) -> (Rc<Shape>, Option<Rc<Shape>>) {
        let first = shape.ids.first().copied().unwrap_or(0);
        let last = shape.ids.last().copied().unwrap_or(0);
        let index = slot_of(shape.ids.len(), first, last);
        let mut ids = [0; INLINE_IDS];
        let head = shape.ids.len().min(INLINE_IDS);
        ids[..head].copy_from_slice(&shape.ids[..head]);
        let shape = Rc::new(shape);
        let slot = Slot {
            len: shape.ids.len(),
            ids,
            shape: Some(Rc::clone(&shape)),
        };
        let evicted = std::mem::replace(&mut self.slots[index], slot).shape;
        (shape, evicted)
    }

    /// Empty the cache, returning every shape (whose key references the caller releases).
    pub fn drain(&mut self) -> Vec<Rc<Shape>> {
        self.seen.fill(0);
        self.slots
            .iter_mut()
            .filter_map(|slot| std::mem::take(slot).shape)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(ids: &[usize]) -> Vec<Entry> {
        ids.iter()
            .map(|&id| (id as *mut ffi::PyObject, std::ptr::null_mut()))
            .collect()
    }

    #[test]
    fn renders_keys_in_canonical_order() {
        let ids = [10, 20, 30];
        let shape = Shape::new(Box::new(ids), [(2, "a"), (0, "b\n"), (1, "c")].into_iter());
        let mut out = CanonicalWriter::default();
        assert_eq!(shape.len(), 3);
        for (index, prefix) in shape.members() {
            prefix.write(&mut out);
            out.int(i64::try_from(index).unwrap_or(-1));
        }
        assert_eq!(out.as_bytes(), br#"{"a":2,"b\n":0,"c":1"#);

        let mut cache = KeyShapes::default();
        assert!(!cache.seen_before(&entries(&ids)));
        assert!(cache.seen_before(&entries(&ids)));
        let (_, evicted) = cache.put(shape);
        assert!(evicted.is_none());
        assert!(cache.get(&entries(&ids)).is_some());
        assert!(cache.get(&entries(&[10, 20])).is_none());
        assert!(cache.get(&entries(&[10, 21, 30])).is_none());
        assert!(cache.get(&entries(&[])).is_none());
        // More keys than a slot holds inline: the rest are compared through the shape.
        let many: Vec<usize> = (1..=10).map(|i| i * 16).collect();
        let keys: Vec<String> = (0..10).map(|i| format!("k{i}")).collect();
        let sorted = keys.iter().enumerate().map(|(i, k)| (i, k.as_str()));
        cache.put(Shape::new(many.clone().into_boxed_slice(), sorted));
        assert!(cache.get(&entries(&many)).is_some());
        let mut other = many.clone();
        other[8] += 1;
        assert!(cache.get(&entries(&other)).is_none());
        assert_eq!(cache.drain().len(), 2);
        assert!(cache.get(&entries(&ids)).is_none());
    }

    #[test]
    fn leaf_memo_is_scoped_to_one_walk() {
        let shape = Shape::new(Box::new([1]), [(0, "k")].into_iter());
        let Some((_, prefix)) = shape.members().next() else {
            return;
        };
        assert!(matches!(prefix.leaf(1, 100), LeafHit::New));
        assert!(matches!(prefix.leaf(1, 100), LeafHit::Repeated));
        prefix.remember(b"\"v\"");
        assert!(matches!(
            prefix.leaf(1, 100),
            LeafHit::Rendered(bytes, 3) if &bytes[..3] == b"\"v\""
        ));
        // Another object, or the same address in a later walk, starts over.
        assert!(matches!(prefix.leaf(1, 200), LeafHit::New));
        assert!(matches!(prefix.leaf(2, 200), LeafHit::New));
        assert!(matches!(prefix.leaf(2, 200), LeafHit::Repeated));
        // Bytes that do not fit are not remembered.
        prefix.remember(&[b'x'; 40]);
        assert!(matches!(prefix.leaf(2, 200), LeafHit::Repeated));
    }

    #[test]
    fn long_keys_are_written_whole() {
        let key = "k".repeat(100);
        let shape = Shape::new(Box::new([1, 2]), [(1, "a"), (0, key.as_str())].into_iter());
        let mut out = CanonicalWriter::default();
        for (_, prefix) in shape.members() {
            prefix.write(&mut out);
        }
        assert_eq!(out.as_bytes(), format!("{{\"a\":,\"{key}\":").as_bytes());
    }
}
