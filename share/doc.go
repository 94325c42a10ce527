// Package share gives files share links: a Store records which files are
// shared, under which token and until when, and Handler serves them over
// HTTP to whoever holds a link.
//
// A token is 32 random bytes from crypto/rand, written base64url without
// padding (43 characters). The store keeps only the SHA-256 of a token, so a
// copy of the store file does not give anyone a working link; tokens are
// compared in constant time. A share's ID is the first 12 hex digits of that
// hash: it names the share in listings and can revoke it, but it is not a
// link.
//
// A share is of a file, not of a name. Create resolves symbolic links,
// refuses anything but a regular file and records the file's device and
// inode. The handler opens the recorded path with O_NOFOLLOW and serves it
// only if it is still a regular file with that device and inode. So a file
// that is changed in place stays shared; a file that is replaced (by a
// symbolic link, another file, or an editor that saves by writing a new file
// and renaming it over the old) is no longer served, and has to be shared
// again. This is deliberate: nothing put at a shared path after sharing can
// be reached through the link.
//
// Every way a request can fail before the file is open (unknown, malformed,
// expired or revoked token, extra path segments, a name that is not the
// file's, a file that changed identity, a method other than GET or HEAD)
// gets the same 404 with the same body, so a response never tells whether a
// token existed.
//
// The store is one JSON file, written durably (temporary file, fsync,
// rename, fsync of the directory) under an flock on a lock file next to it,
// so several nash processes can share and revoke at once. Readers take no
// lock: they always see a whole file, the old one or the new one. The
// handler reads the store on every request, so a revocation by another
// process takes effect at once.
package share
