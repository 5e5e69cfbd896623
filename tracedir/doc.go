// Package tracedir reads a trace directory as the profiler uploads it:
// its file tree, metadata.json, the tracer's stats files and kernel lists,
// and the optional timing files. It decides nothing about states; the
// scanner and the post-processor both read traces through it.
//
// Every function reads only below the trace directory: symlinks are
// resolved by reading the link text, and one that points outside is an
// error, never followed.
package tracedir
