package cascade

import (
	"fmt"
	"strings"
	"time"
)

// TraceState is where a trace is on its way from first file to ready.
type TraceState string

// The states of a trace, in the order a healthy trace passes through them.
const (
	TraceUploading  TraceState = "UPLOADING"
	TraceProcessing TraceState = "PROCESSING"
	TraceReady      TraceState = "READY"
	TraceFailed     TraceState = "FAILED"
)

// Finished reports whether s is a state the scanner no longer drives:
// ready or failed.
func (s TraceState) Finished() bool { return s == TraceReady || s == TraceFailed }

// Is says what a trace in state s is, for a sentence about it: "is
// uploading", "is being processed", "is ready", "has failed".
func (s TraceState) Is() string {
	switch s {
	case TraceProcessing:
		return "is being processed"
	case TraceFailed:
		return "has failed"
	}
	return "is " + strings.ToLower(string(s))
}

// MaxTraceIDLen is the longest trace id, in bytes. A trace's id is its
// folder's name in the bucket, and the server names work files after it
// (package postproc: work/postprocess/<id>.log and <id>.running, the
// longest); a file name holds at most 255 bytes, so an id leaves room for
// ".running". A longer trace folder is refused by the S3 endpoint and
// cascade upload, and failed by the scanner (TraceIDTooLong).
const MaxTraceIDLen = 255 - len(".running")

// TraceIDTooLong says why a trace folder name longer than MaxTraceIDLen
// cannot be a trace's id, or "" when it is not: "is 250 bytes long; a
// trace id holds at most 247 bytes (...)", after what names it.
func TraceIDTooLong(name string) string {
	if len(name) <= MaxTraceIDLen {
		return ""
	}
	return fmt.Sprintf("is %d bytes long; a trace id holds at most %d bytes (the server names its work files after it, such as work/postprocess/<id>.running)", len(name), MaxTraceIDLen)
}

// DefaultTraceGPUArch is the architecture assumed, as the Traces guide
// says, when metadata.json has no trace_gpu_arch and no kernel trace's
// header gives its binary version.
const DefaultTraceGPUArch = "sm_90"

// Where a trace's architecture came from (Trace.TraceGPUArchFrom), besides
// a kernel trace's header ("traces/kernel-1.trace: -binary version = 61").
const (
	ArchFromMetadata = "metadata.json"
	ArchAssumed      = "assumed: metadata.json has no trace_gpu_arch and no kernel trace's header gives its binary version"
)

// Trace is one trace directory in the bucket and everything Cascade knows of
// it. Nullable text fields are pointers so that "absent" and "empty" differ.
type Trace struct {
	ID           string     `gorm:"primaryKey"`
	Seq          int64      `gorm:"not null;uniqueIndex"` // insertion order; newest first in listings
	State        TraceState `gorm:"not null;index"`
	Error        *string
	Model        *string
	Layers       *string
	Prompts      []string `gorm:"serializer:json"`
	SourceGPU    *string
	TraceGPUArch string `gorm:"not null"`
	// TraceGPUArchFrom says where TraceGPUArch came from: ArchFromMetadata,
	// a kernel trace's header, or ArchAssumed.
	TraceGPUArchFrom string `gorm:"column:trace_gpu_arch_from;not null;default:''"`
	// HeaderArch is the architecture its kernel traces' headers give
	// ("-binary version = 61" is sm_61), by which the simulator decodes
	// them whatever TraceGPUArch says; "" when no header was read.
	HeaderArch         string `gorm:"not null;default:''"`
	SuggestedSimConfig *string
	KernelCount        int `gorm:"not null"`
	// UntracedKernels counts the launches its stats files list without a
	// kernel trace in kernelslist.g (Kernel.Untraced): a trace taken with
	// the tracer's DYNAMIC_KERNEL_LIMIT ranges (a sampling plan's
	// traceList) traces only some launches. Such a trace simulates only
	// sampled, or the kernel ids it traced; 0 for a trace of every launch.
	UntracedKernels int   `gorm:"not null;default:0"`
	Bytes           int64 `gorm:"not null"`
	HasRealTiming   bool  `gorm:"not null"`
	HasStepTimeline bool  `gorm:"not null"`
	Sample          bool  `gorm:"not null"`
	// Warnings lists recovered bad input (malformed stats rows and the
	// like), each naming its file and line: the post-processor's, set
	// when the trace becomes ready.
	Warnings []string `gorm:"serializer:json"`
	// ScanWarnings are the scanner's: metadata.json values of the wrong
	// shape (each naming its field and what was expected), and a note
	// when the upload's data files changed after it completed. They never
	// fail a trace. The API shows them with Warnings (AllWarnings).
	ScanWarnings []string `gorm:"serializer:json"`
	// Profiles are the hardware profiles metadata.json named, as they
	// were read when the trace became ready (KernelCounter holds what
	// they measured); empty when it named none.
	Profiles []ProfileRead `gorm:"serializer:json"`
	// MetadataSum is the SHA-256 of the metadata.json the trace's upload was
	// found complete (or failed) with: a finished trace whose metadata.json
	// differs was uploaded again. Empty until then, and for traces stored
	// before it was kept.
	MetadataSum string
	// MetadataCoreSum fingerprints that metadata.json without its
	// profiles (tracedir.MetadataCoreSum): a ready trace whose
	// metadata.json changed in its profiles alone is not uploaded again,
	// its profiles are read again. Empty until then, and for traces
	// stored before it was kept.
	MetadataCoreSum string `gorm:"not null;default:''"`
	// UploadSum fingerprints the upload's data files (tracedir's
	// UploadFiles: raw kernel traces, kernel lists, stats) as the upload
	// was found complete: a finished trace whose data files differ was
	// uploaded again. Empty until then, and for traces stored before it
	// was kept.
	UploadSum string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Retryable reports whether a retry can change the trace's fate: not when
// its own metadata.json failed it (a status "failed", JSON that does not
// parse, a files list that leaves the trace). Every such error starts
// with "metadata.json" (package scanner's and tracedir's messages); the
// trace starts over by itself once a new metadata.json is uploaded.
func (t Trace) Retryable() bool {
	return !(t.State == TraceFailed && t.Error != nil && strings.HasPrefix(*t.Error, "metadata.json"))
}

// AllWarnings is what the API shows as the trace's warnings: the
// scanner's, then the post-processor's.
func (t Trace) AllWarnings() []string {
	w := make([]string, 0, len(t.ScanWarnings)+len(t.Warnings))
	return append(append(w, t.ScanWarnings...), t.Warnings...)
}

// Kernel is one traced kernel of a trace, from the tracer's stats file.
type Kernel struct {
	TraceID  string `gorm:"primaryKey"`
	Seq      int    `gorm:"primaryKey;autoIncrement:false"` // position in the trace's kernel list
	KernelID int    `gorm:"not null"`                       // id within its CUDA context
	Context  *string
	Name     string `gorm:"not null"`
	// DemangledName is Name demangled ("void vllm::rms_norm_kernel<...>(...)"),
	// "" when Name is not a mangled C++ name; searches match it too.
	DemangledName string `gorm:"not null;default:''"`
	TraceFile     string `gorm:"not null"`
	GridX         int    `gorm:"not null"`
	GridY         int    `gorm:"not null"`
	GridZ         int    `gorm:"not null"`
	BlockX        int    `gorm:"not null"`
	BlockY        int    `gorm:"not null"`
	BlockZ        int    `gorm:"not null"`
	Instructions  *int64
	// Untraced: the tracer counted this launch (its stats row) but wrote
	// no kernel trace of it, as it does outside its DYNAMIC_KERNEL_LIMIT
	// range; kernelslist.g does not name it, so no run can simulate it.
	Untraced bool `gorm:"not null;default:false"`
}

// Traced reports whether the trace holds the launch's kernel trace.
func (k Kernel) Traced() bool { return !k.Untraced }

// Dim3 is a CUDA grid or block size.
type Dim3 struct{ X, Y, Z int }

// Grid is the kernel's grid size.
func (k Kernel) Grid() Dim3 { return Dim3{k.GridX, k.GridY, k.GridZ} }

// Block is the kernel's block size.
func (k Kernel) Block() Dim3 { return Dim3{k.BlockX, k.BlockY, k.BlockZ} }

// Ptr returns a pointer to v; it is how callers fill nullable fields.
func Ptr[T any](v T) *T { return &v }

// Deref returns *p, or the zero value when p is nil.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// A TraceWrite is one trace's part of a store's UpdateTraces (db.DB.UpdateTraces).
type TraceWrite struct {
	ID string
	// Update changes the trace as the fn of a store's UpdateTraceAndKernels
	// does: found is false, and the trace has only its ID, when there is
	// none, and saving it inserts it; dropKernels leaves it without
	// kernels. An error (ErrUnchanged too) leaves this trace as it was and
	// the others go on.
	Update func(t *Trace, found bool) (dropKernels bool, err error)
	// Kernels, when not nil, become the trace's kernel list once Update
	// saved it (their TraceID and Seq are set here). They go in within the
	// batch's transaction: a small list, as a trace's stats hold at most a
	// few thousand kernels; a big one goes through
	// ReplaceKernelsFrom.
	Kernels []Kernel
}

// A TraceWritten is what a store's UpdateTraces (db.DB.UpdateTraces) did with one TraceWrite.
type TraceWritten struct {
	Trace Trace // as committed when Saved
	Saved bool
	Err   error // Update's error other than ErrUnchanged
}
