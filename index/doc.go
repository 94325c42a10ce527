// Package index finds files by keyword (bleve, BM25, on disk) and by meaning
// (embeddings), fuses both rankings, extracts text from documents and keeps
// the index in step with the disk. It is the only package that imports bleve.
//
// # Layout on disk
//
// An index is one directory: bleve/ holds the keyword index (scorch,
// English analysis with dots and underscores split and stemming, no _all
// field, a format version that tells an index needing a rebuild);
// catalog.db (bbolt) holds
// the roots, one record per file (size, mtime, chunk count, embedding model,
// skip reason) and the chunk vectors. Writes go catalog intent, keyword
// index, vectors and catalog, so a crash leaves records marked pending that
// the next run re-indexes. One process at a time may open an index; another
// gets ErrLocked.
//
// # Documents and chunks
//
// Extract reads plain text, Markdown, source code, HTML, PDF
// (ledongthuc/pdf, pure Go), DOCX and ODT (zip and XML). Binary content,
// files over the size cap, special files, unfollowable symlinks and corrupt
// documents are skipped with a reason; a parser panic is recovered. Text is
// cut into chunks of about 400 words overlapping by 50; each chunk is a
// bleve document, and a hit names the best chunk of a file with its line.
//
// # Retrieval
//
// Keyword search scores words with BM25F (its own bleve searcher): a body
// field holding the file name, title and text, fully length-normalised,
// and small weights for words also in the name, title and path, summed
// before saturation. The query language (ParseQuery) has phrases, AND/OR/NOT, groups and
// filters on directory, extension, modification time and size. Semantic
// search embeds chunks with an Embedder (langchaingo's interface: Ollama,
// OpenAI-compatible servers) and ranks them by cosine similarity in a
// pure-Go store searched by brute force; hybrid search fuses both rankings
// by reciprocal rank fusion. Without an embedder, semantic requests run as
// keyword search with synonym expansion and Result.Notice says so.
// Retrieve is the planner's entry point.
//
// # Watching
//
// Watch (fsnotify) batches events, re-indexes the changed paths, renews the
// watches of renamed directories and rescans every root when the kernel's
// event queue overflows.
package index
