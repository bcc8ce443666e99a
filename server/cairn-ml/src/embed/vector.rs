//! Vector arithmetic on embeddings: the dot product (the cosine of unit vectors) and scaling
//! to unit length, shared by the embedding tools and the semantic index.

/// The dot product; the cosine similarity of unit vectors.
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `v` scaled to unit length (a zero vector stays zero).
pub(crate) fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = dot(&v, &v).sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}
