// Package index finds files by keyword (bleve, BM25, on disk) and by meaning
// (embeddings), fuses both rankings, extracts text from documents and keeps
// the index in step with the disk. It is the only package that imports bleve.
//
// # Layout on disk
//
// An index is one directory: bleve/ holds the keyword index (scorch, one
// document per file, English analysis with dots and underscores split and
// stemming, no _all field, a format version that tells an index needing a
// rebuild); catalog.db (bbolt) holds the roots, one record per file (size,
// mtime, field lengths, passage count, embedding model, skip reason), the
// summed field lengths and the passage vectors. Writes go catalog intent,
// keyword index, vectors and catalog, so a crash leaves records marked
// pending that the next run re-indexes. A sync walks the disk and the
// catalog a directory at a time, so its memory does not grow with the
// tree. One process at a time may open an index; another gets ErrLocked
// (nash keeps it open in a server, nash-index).
//
// # Documents
//
// Extract reads plain text, Markdown, source code, HTML, PDF
// (ledongthuc/pdf, pure Go), DOCX and ODT (zip and XML), with a title and
// section headings where the format has them. Binary content, files over
// the size cap, special files, unfollowable symlinks and corrupt documents
// are skipped with a reason; a parser panic is recovered. A file is one
// document: its text (with positions), its lead (the first 150 words),
// name, title, headings and directory. With an embedder its text is also
// cut into passages of about 400 words, overlapping by 50, each embedded.
//
// # Retrieval
//
// Files are ranked as files (bm25f.go): BM25F over the whole file, with
// field weights and each field's average length, plus the score of the
// file's best passage (the query's words close together), so that a long
// document about the query ranks first and a short one is not drowned. A
// searcher bounds each file's score from its postings; the best are then
// scored exactly from the positions of their words. The query language
// (ParseQuery) has phrases, AND/OR/NOT, groups and filters on directory,
// extension, modification time and size. Semantic search embeds passages
// with an Embedder (langchaingo's interface: Ollama, OpenAI-compatible
// servers) and ranks files by their centroid's similarity plus their best
// passage's, in a pure-Go store searched by brute force; hybrid search
// fuses both rankings by reciprocal rank fusion. Without an embedder,
// semantic requests run as keyword search and Result.Notice says so
// (expanding the query with synonyms was measured and did not help:
// expand_test.go). Retrieve is the planner's entry point.
//
// # Watching
//
// Watch (fsnotify) batches events, re-indexes the changed paths, renews the
// watches of renamed directories and rescans every root when the kernel's
// event queue overflows.
package index
