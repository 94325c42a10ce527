// Package index finds files by keyword (bleve, BM25, on disk) and by meaning
// (embeddings), fuses both rankings, extracts text from documents and keeps
// the index in step with the disk. It is the only package that imports bleve.
package index
