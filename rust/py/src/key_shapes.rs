//! A per-walk cache of object "shapes": the key order and pre-rendered keys of dicts that
//! share the same key objects.
//!
//! Wire documents repeat shapes (500 bars with the same seven keys, 60 typed values with the
//! same three), and the keys are usually the very same interned `str` objects. When a dict's key
//! objects are identical, in iteration order, to a cached shape's, its sorted order and
//! canonical `"key":` bytes are reused: no UTF-8 lookups, escape checks or sorting.
//!
//! Identity is object address. That is sound only within one walk: no Python code runs during
//! a walk and the root keeps every object alive, so an address cannot be reused for another
//! object. The cache is therefore created per walk and dropped with it.

use std::rc::Rc;

use smallvec::SmallVec;

/// Dicts with more keys than this are not cached (the sorted order is stored as `u8`).
pub const MAX_SHAPE_KEYS: usize = 16;

const SLOTS: usize = 8;

/// Key objects of one dict, by address, in iteration order.
pub type KeyIds = SmallVec<[usize; MAX_SHAPE_KEYS]>;

/// One cached shape.
#[derive(Debug)]
pub struct Shape {
    ids: KeyIds,
    /// For each key in canonical order: its index in iteration order, and where its rendered
    /// bytes end in `rendered`.
    order: SmallVec<[(u8, u32); MAX_SHAPE_KEYS]>,
    rendered: Vec<u8>,
}

impl Shape {
    /// Build a shape from keys already in canonical order, each with its iteration index.
    #[must_use]
    pub fn new(ids: KeyIds, sorted: &[(usize, &str)]) -> Self {
        let mut rendered = Vec::with_capacity(sorted.iter().map(|(_, k)| k.len() + 3).sum());
        let mut order = SmallVec::new();
        for (index, key) in sorted {
            spine_core::json::write_string(&mut rendered, key);
            rendered.push(b':');
            order.push((
                u8::try_from(*index).unwrap_or(u8::MAX),
                u32::try_from(rendered.len()).unwrap_or(u32::MAX),
            ));
        }
        Self {
            ids,
            order,
            rendered,
        }
    }

    /// Keys in canonical order: (iteration index, canonical `"key":` bytes).
    pub fn entries(&self) -> impl Iterator<Item = (usize, &[u8])> {
        let mut start = 0usize;
        self.order.iter().map(move |&(index, end)| {
            let end = end as usize;
            let bytes = &self.rendered[start..end];
            start = end;
            (usize::from(index), bytes)
        })
    }
}

/// A small direct-mapped cache of shapes, keyed by key count and first key.
#[derive(Debug, Default)]
pub struct KeyShapes {
    slots: [Option<Rc<Shape>>; SLOTS],
}

fn slot(len: usize, first: usize) -> usize {
    (len ^ (first >> 4) ^ (first >> 12)) % SLOTS
}

impl KeyShapes {
    /// The cached shape for exactly these key objects, if any.
    #[must_use]
    pub fn get(&self, mut ids: impl ExactSizeIterator<Item = usize> + Clone) -> Option<Rc<Shape>> {
        let len = ids.len();
        let first = ids.clone().next()?;
        let shape = self.slots[slot(len, first)].as_ref()?;
        (shape.ids.len() == len && shape.ids.iter().all(|id| ids.next() == Some(*id)))
            .then(|| Rc::clone(shape))
    }

    /// Remember a shape (replacing whatever shared its slot).
    pub fn put(&mut self, shape: Shape) {
        let index = slot(shape.ids.len(), shape.ids.first().copied().unwrap_or(0));
        self.slots[index] = Some(Rc::new(shape));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_keys_in_canonical_order() {
        let ids: KeyIds = SmallVec::from_slice(&[10, 20, 30]);
        let shape = Shape::new(ids.clone(), &[(2, "a"), (0, "b\n"), (1, "c")]);
        let entries: Vec<(usize, Vec<u8>)> =
            shape.entries().map(|(i, b)| (i, b.to_vec())).collect();
        assert_eq!(
            entries,
            vec![
                (2, b"\"a\":".to_vec()),
                (0, b"\"b\\n\":".to_vec()),
                (1, b"\"c\":".to_vec())
            ]
        );
        let mut cache = KeyShapes::default();
        cache.put(shape);
        assert!(cache.get(ids.iter().copied()).is_some());
        assert!(cache.get([10, 20].into_iter()).is_none());
        assert!(cache.get([10, 20, 31].into_iter()).is_none());
        assert!(cache.get([].into_iter()).is_none());
    }
}
