package scanner

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/cascade-sim/cascade"
	"github.com/cascade-sim/cascade/tracedir"
	"github.com/cascade-sim/cascade/tracestate"
)

// sight is what one walk of a trace saw: its tree (every file's size,
// time and, for a link, target), metadata.json as read just after the
// walk, and whether the real-timing file holds rows. [see] reads it from
// disk; [inspect] decides from it alone.
type sight struct {
	tree *tracedir.Tree
	// meta is metadata.json's content; nil when the tree has none, or it
	// went between the walk and the read (the next walk sees why).
	meta       []byte
	realTiming bool
	// realTimingWarning says why a real-timing file meant is unusable
	// (tracedir.Tree.RealTimingOf); "" when it is not.
	realTimingWarning string
	// parsed is meta parsed, when see read it: inspect parses it only
	// when not.
	parsed *parsedMeta
	// binVersion is the binary version a kernel trace's header gives, read
	// only when metadata.json does not name the architecture.
	binVersion    tracedir.BinaryVersion
	hasBinVersion bool
	// writing: the S3 endpoint is writing one of the trace's files, or a
	// multipart upload of one is open (Config.Writing), which no change
	// on disk shows until it completes.
	writing bool
	// arriving is Config.Arriving's answer when writing.
	arriving map[string]int64
}

type parsedMeta struct {
	meta tracedir.Metadata
	err  error
}

// see reads what a walk's decision needs beyond the tree.
func see(tree *tracedir.Tree) sight {
	s := sight{tree: tree}
	var meta tracedir.Metadata
	if tree.Has(tracedir.MetadataFile) {
		b, err := tracedir.ReadMetadataBytes(tree.Root)
		var big *tracedir.MetadataTooBigError
		switch {
		case errors.As(err, &big):
			// Not read: it stands for itself by its size and time (its
			// metaSum changes when it is replaced), and fails the trace.
			f := tree.Files[tracedir.MetadataFile]
			s.meta = []byte("unread " + fileSig(big.Size, f.ModTime))
			s.parsed = &parsedMeta{err: err}
		case err == nil:
			s.meta = append(make([]byte, 0, len(b)), b...)
			var err error
			meta, err = tracedir.ParseMetadata(b)
			s.parsed = &parsedMeta{meta, err}
		}
	}
	s.realTiming, s.realTimingWarning = tree.RealTimingOf(meta)
	// Read whatever metadata.json says, which it may contradict
	// (archContradicted); a header, once per kernel trace file.
	s.binVersion, s.hasBinVersion = tree.BinaryVersion()
	return s
}

// history is what the guide's "hasn't changed since the previous scan"
// needs of a trace's earlier walks: the signatures of its tree and of its
// metadata.json, and since when each has been what it is.
type history struct {
	treeSig   string    // tracedir.Tree.Signature
	treeSince time.Time // when treeSig was first seen
	metaSig   string    // fileSig of metadata.json; "" when there is none
	metaSince time.Time
	// upload is the trace's UploadSum when a walk last saw its data files
	// so, and uploadPaths those files' paths summed up then: a later walk
	// names by them the files gone since (tracedir.Gone). Set once the walk
	// is committed (kept); "" when the trace has no UploadSum.
	upload      string
	uploadPaths tracedir.UploadPaths
}

// kept records in h what a committed walk l saw of the upload's data
// files, when they are those the stored trace t completed with.
func (h *history) kept(l look, t cascade.Trace) {
	switch t.UploadSum {
	case l.uploadSum:
		h.upload, h.uploadPaths = l.uploadSum, l.uploadPaths
	case "":
		h.upload, h.uploadPaths = "", tracedir.UploadPaths{}
	}
}

// look is what one walk of a trace says: its scan fields, what the walk
// saw happen to the upload (an event for package tracestate, "" for
// none), and what a trace past uploading needs to know to tell a new
// upload from its own.
type look struct {
	// gone: the tree holds no file (only dotfiles or directories), so it
	// is no trace, as in a bucket, where a folder is only the common
	// prefix of its objects. A trace appears with its first file and goes
	// with its last.
	gone bool

	bytes           int64
	rawKernels      int
	hasRealTiming   bool
	hasStepTimeline bool
	meta            *tracedir.Metadata // nil when missing or broken

	hasMeta bool
	metaSum string // SHA-256 of metadata.json; "" when missing
	// uploadSum fingerprints the upload's data files (tracedir.UploadSum);
	// which names the one to blame when it changed.
	uploadSum, which string
	// uploadPaths sums up the paths of those present (history.kept);
	// lost names the files gone since the walk whose UploadSum was
	// lostSince (tracedir.Gone), "" when none surely is.
	uploadPaths     tracedir.UploadPaths
	lost, lostSince string
	// writing: a file of the trace is being written through the S3
	// endpoint (sight.writing).
	writing bool
	// profiles is what the walk saw of the hardware profiles
	// metadata.json names (profiles.go); zero without a metadata.json
	// that parses.
	profiles profilesLook
	// warnings are metadata.json's values of the wrong shape
	// (tracedir.Metadata.Warnings).
	warnings []string
	// arch and archFrom are the trace's architecture and where it came
	// from, when metadata.json does not name it (see archOf).
	arch, archFrom  string
	hasKernelsListG bool
	// metaFailed is the error of a metadata.json with status "failed",
	// whatever the trace's state; "" otherwise.
	metaFailed string

	// event is the walk's verdict on the upload: complete, broken, or
	// failed by its metadata.json; err says why for the last two.
	event tracestate.Event
	err   string

	// knew is the state the scanner last knew the trace in when the walk
	// began ("" for a trace new to it). Another party may have moved the
	// trace meanwhile (the post-processor: processing to ready or
	// failed); update then leaves the trace alone (see stale).
	knew cascade.TraceState
}

// arrived is the bytes arrived of the files being uploaded that the tree
// does not hold yet (dotfiles aside, as the walk leaves them), and how many
// of them are raw kernel traces.
func arrived(tree *tracedir.Tree, arriving map[string]int64) (bytes int64, kernels int) {
	for rel, size := range arriving {
		if tree.Has(rel) || tracedir.IsDotPath(rel) {
			continue
		}
		bytes += size
		if tracedir.IsRawKernelPath(rel) {
			kernels++
		}
	}
	return bytes, kernels
}

// inspect applies the guide's rules to what a walk at now saw, given the
// trace's earlier walks (h) and the scan interval, and returns its look
// and the history with this walk added. It is the scanner's verdict, and
// reads nothing but its arguments: the clock is now. [look.apply] then
// applies the look to the stored trace, moving its state as
// [tracestate.Next] says.
func inspect(saw sight, h history, now time.Time, interval time.Duration) (look, history) {
	tree := saw.tree
	if len(tree.Files) == 0 {
		return look{gone: true}, h
	}
	if sig := tree.Signature(); sig != h.treeSig {
		h.treeSig, h.treeSince = sig, now
	}
	msig := ""
	if f, ok := tree.Files[tracedir.MetadataFile]; ok {
		msig = fileSig(f.Size, f.ModTime)
	}
	if msig != h.metaSig {
		h.metaSig, h.metaSince = msig, now
	}
	inBytes, inKernels := arrived(tree, saw.arriving)
	l := look{
		bytes:           tree.Bytes() + inBytes,
		rawKernels:      tree.RawKernels() + inKernels,
		hasRealTiming:   saw.realTiming,
		hasStepTimeline: tree.HasStepTimeline(),
		hasKernelsListG: tree.Has(tracedir.KernelsListG),
		hasMeta:         saw.meta != nil,
	}
	l.arch, l.archFrom = archOf(saw)
	var meta tracedir.Metadata
	var metaErr error
	if l.hasMeta {
		sum := sha256.Sum256(saw.meta)
		l.metaSum = hex.EncodeToString(sum[:])
		if saw.parsed != nil {
			meta, metaErr = saw.parsed.meta, saw.parsed.err
		} else {
			meta, metaErr = tracedir.ParseMetadata(saw.meta)
		}
		if metaErr == nil {
			l.meta = &meta
			l.metaFailed = meta.FailedText()
			l.warnings = meta.Warnings
			l.profiles = lookProfiles(tree, saw.meta, meta)
		}
	}
	if saw.realTimingWarning != "" {
		l.warnings = append(slices.Clip(l.warnings), saw.realTimingWarning)
	}
	l.uploadSum, l.which, l.uploadPaths = tracedir.UploadSumPaths(tree, l.meta)
	if h.upload != "" && l.uploadSum != h.upload {
		l.lost, l.lostSince = tracedir.Gone(tree, l.meta, h.uploadPaths, l.uploadPaths), h.upload
	}
	l.writing = saw.writing
	// The walk's verdict is reached for every walk; what it does to the
	// trace's state depends on the state the committing transaction finds
	// (tracestate.Next): a retried trace is uploading again before this
	// scanner hears of it.
	// Quiet: the tree did not change for an interval, and no file of it
	// is being written through the S3 endpoint.
	settled := quiet(h.treeSince, now, interval) && !saw.writing
	wrong := ""
	if why := cascade.TraceIDTooLong(filepath.Base(tree.Root)); why != "" {
		// Put there by other means than the S3 endpoint and cascade
		// upload, which refuse it: the post-processor's work files could
		// not be named after it.
		wrong = "the trace folder's name " + why + ": upload the trace under a shorter name, and delete this one (Delete on its page, or removeTrace)"
	} else if !l.hasMeta || (metaErr == nil && l.metaFailed == "" && !meta.HasFiles && !streamComplete(tree)) {
		wrong = wrongFolder(tree, l.hasMeta)
	}
	switch {
	case wrong != "":
		// Never complete: fail once the tree is quiet, so a client that
		// uploads the right files next is not failed on its first ones.
		if settled {
			l.fail(tracestate.UploadBroken, wrong)
		}
	case !l.hasMeta:
		// Still uploading: the upload is complete only once metadata.json
		// exists. Say so once nothing has arrived for a while: the printed
		// commands upload it last, and a second half that failed left the
		// trace waiting without a word.
		if quiet(h.treeSince, now, waitingNoteAfter) && !saw.writing {
			l.warnings = append(slices.Clip(l.warnings), noMetadataNote)
		}
	case metaErr != nil:
		// A half-written file does not parse either: fail only once it
		// has stopped changing.
		if quiet(h.metaSince, now, interval) {
			l.fail(tracestate.UploadBroken, metaErr.Error())
		}
	case l.metaFailed != "":
		l.fail(tracestate.MetadataFailed, l.metaFailed)
	case meta.HasFiles:
		complete, waiting, err := filesComplete(tree, meta.Files)
		if w := listedDotfiles(meta.Files); w != "" && err == nil {
			l.warnings = append(slices.Clip(l.warnings), w)
		}
		switch {
		case err != nil:
			l.fail(tracestate.UploadBroken, err.Error())
		case complete:
			l.event = tracestate.UploadComplete
		case quiet(h.treeSince, now, waitingNoteAfter):
			// Nothing arrived for a while: say what it waits for (a file
			// listed at a size it will never have, one never uploaded).
			l.warnings = append(slices.Clip(l.warnings), waiting)
		}
	default:
		switch {
		case streamComplete(tree):
			if settled {
				l.event = tracestate.UploadComplete
			}
		case quiet(h.treeSince, now, waitingNoteAfter):
			// As for a listed upload: say what it waits for.
			l.warnings = append(slices.Clip(l.warnings), streamWaiting(tree))
		}
	}
	return l, h
}

// archOf is a trace's architecture when metadata.json does not name it:
// the binary version its kernel traces' headers give (the architecture the
// trace was taken on, which the simulator decodes it by), or, without one,
// the Traces guide's default, said to be assumed.
func archOf(saw sight) (arch, from string) {
	if saw.hasBinVersion {
		v := saw.binVersion
		return v.Arch(), fmt.Sprintf("%s: -binary version = %d", v.File, v.Version)
	}
	return cascade.DefaultTraceGPUArch, cascade.ArchAssumed
}

// archContradicted says how metadata.json's trace_gpu_arch, meta, differs
// from the binary version the kernel traces' headers give, "" when it
// does not or they give none. The trace keeps metadata.json's
// architecture (the Traces guide's rule; it chooses the default config),
// but the simulator decodes the instructions by the header: a run of a
// version it cannot decode fails, whatever metadata.json says.
func archContradicted(meta string, l look) string {
	if l.archFrom == cascade.ArchAssumed || archNumber(meta) == archNumber(l.arch) {
		return ""
	}
	return fmt.Sprintf("%s: trace_gpu_arch is %q, but %s (%s): the simulator decodes the trace by its headers, as %s",
		tracedir.MetadataFile, meta, l.archFrom, l.arch, l.arch)
}

// archNumber is an architecture's number: "sm_90a" and "sm_90" are "90".
func archNumber(arch string) string {
	s := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(arch)), "sm_")
	return strings.TrimRight(s, "abcdefghijklmnopqrstuvwxyz")
}

// FilesChangedNote starts the note a trace keeps in its ScanWarnings when
// its upload's data files changed after it completed, and it was
// post-processed again.
const FilesChangedNote = "data files changed after the upload completed"

// FilesChangedDuringNote starts that note when the files changed while
// the trace was being post-processed.
const FilesChangedDuringNote = FilesChangedNote + ", during post-processing"

// quiet reports whether something first seen at since has stayed the same
// for a scan interval: the guide's "hasn't changed since the previous
// scan". An eighth of the interval is allowed for the ticker's jitter.
func quiet(since, now time.Time, interval time.Duration) bool {
	return now.Sub(since) >= interval-interval/8
}

// noMetadataNote is an upload's warning while it has no metadata.json.
const noMetadataNote = tracedir.MetadataFile + ": not uploaded yet, and nothing else arrived for 30 s: the upload is complete only once it is there (the commands the server prints upload it last: if that step failed, upload metadata.json again)"

// waitingNoteAfter is how long a listed upload's tree must not change
// before its trace's warnings say which files it waits for.
const waitingNoteAfter = 30 * time.Second

// fileSig is what history.metaSig holds of a file.
func fileSig(size int64, mod time.Time) string { return fmt.Sprint(size, mod.UnixNano()) }

func (l *look) fail(ev tracestate.Event, msg string) { l.event, l.err = ev, msg }

// A change is what apply did to a trace's state.
type change int

const (
	unchanged   change = iota
	moved              // by the walk's event: uploading to processing or failed, or processing to failed
	startedOver        // a finished trace uploaded again (tracestate.FilesChanged): back to uploading
	// reprofiled: a ready trace's profiles changed, and nothing else of
	// its upload (tracestate.ProfilesChanged): it stays READY.
	reprofiled
	// stale: the walk began before another party finished the trace
	// (look.knew), so it may have missed that party's files, the
	// post-processor's kernelslist.g above all: it is not applied, and
	// the trace is walked again.
	stale
)

// apply writes the look's fields into t and moves its state as
// [tracestate.Next] says of the event the walk saw:
//
//   - the walk's verdict (l.event) moves an uploading trace by the
//     guide's rules, and a processing one to failed when metadata.json
//     now says so;
//   - a finished (ready or failed) trace goes back to uploading
//     (tracestate.FilesChanged) when it is uploaded again: its
//     metadata.json is gone or differs from the one its upload completed
//     with, or, ready, it lost traces/kernelslist.g or a data file of its
//     upload changed (uploadSum);
//   - a ready trace whose hardware profiles changed and nothing else
//     (its metadata.json differs in its profiles alone, or a profile
//     file it names was added, changed or removed) stays READY, and
//     apply returns reprofiled (tracestate.ProfilesChanged): its profiles
//     are read again, the post-processor does not run.
//
// The post-processor's writes touch neither metadata.json nor, once it is
// done, kernelslist.g, so they never count as an upload; processing to
// ready is the post-processor's event.
func (l look) apply(t *cascade.Trace) (change, string) {
	ev := l.event
	why := ""
	if t.State.Finished() {
		switch {
		case !l.hasMeta && t.MetadataSum != "":
			why = "metadata.json removed"
		case !l.hasMeta:
			// It never had one: failed uploaded from the wrong folder
			// (wrongFolder), which it still is.
		case t.MetadataSum == "":
			t.MetadataSum = l.metaSum // kept since schema version 3: adopt it
		case l.metaSum != t.MetadataSum && (t.State != cascade.TraceReady || t.MetadataCoreSum == "" || l.profiles.metaCoreSum != t.MetadataCoreSum):
			why = "metadata.json replaced"
		case t.State == cascade.TraceReady && !l.hasKernelsListG:
			why = tracedir.KernelsListG + " removed"
		case t.UploadSum == "":
			t.UploadSum = l.uploadSum // kept since schema version 14: adopt it
		case t.State == cascade.TraceReady && l.uploadSum != t.UploadSum && l.writing:
			// Decided once the S3 endpoint's writes end: a file written
			// again with the bytes it had gets its modification time
			// back as its write ends (package s3gw), and then nothing
			// changed.
		case t.State == cascade.TraceReady && l.uploadSum != t.UploadSum:
			// A failed trace's files are fixed and then retried
			// (retryTrace), as its error says: no start-over of its own.
			why = FilesChangedNote
			if which := l.blame(t); which != "" {
				why += " (" + which + ")"
			}
		}
		if why != "" {
			ev = tracestate.FilesChanged
		}
	}
	if t.State == cascade.TraceProcessing && t.UploadSum != "" && l.uploadSum != t.UploadSum && !l.writing {
		// Its post-processor works from the earlier files: start over
		// now (the Machine stops it), not after a READY of those.
		why, ev = FilesChangedDuringNote, tracestate.FilesChanged
		if which := l.blame(t); which != "" {
			why += " (" + which + ")"
		}
	}
	c := unchanged
	if t.State == cascade.TraceReady && why == "" && l.hasMeta {
		// Its profiles alone may have changed: metadata.json's (the
		// rest of it is as it was) or their files.
		if l.metaSum != t.MetadataSum || l.profiles.changed(t.Profiles) {
			c = reprofiled
		}
		if t.MetadataCoreSum == "" || l.metaSum == t.MetadataSum {
			t.MetadataCoreSum = l.profiles.metaCoreSum // kept since schema version 18: adopt it
		}
		t.MetadataSum = l.metaSum
	}
	notes := filesChangedNotes(t.ScanWarnings)
	if to, ok := tracestate.Next(t.State, ev); ok {
		switch {
		case ev == tracestate.FilesChanged:
			c = startedOver
			t.State, t.Error, t.MetadataSum, t.UploadSum, t.Warnings = to, nil, "", "", []string{}
			t.MetadataCoreSum = ""
			notes = nil
			switch {
			case strings.HasPrefix(why, FilesChangedDuringNote):
				notes = []string{why + "; post-processed again"}
			case strings.HasPrefix(why, FilesChangedNote):
				// Kept until the next upload: runs of the earlier files
				// are told apart by their traceSum.
				notes = []string{why + "; post-processed again: runs launched before simulated the earlier files (their traceSum differs)"}
			}
		default:
			c = moved
			t.State, t.Error, t.MetadataSum, t.UploadSum = to, nil, l.metaSum, l.uploadSum
			t.MetadataCoreSum = l.profiles.metaCoreSum
			if to == cascade.TraceFailed {
				t.Error = &l.err
			}
		}
	}

	t.ScanWarnings = append(append([]string{}, l.warnings...), notes...)
	t.Bytes = l.bytes
	t.HasRealTiming = l.hasRealTiming
	t.HasStepTimeline = l.hasStepTimeline
	if t.State == cascade.TraceUploading || t.State == cascade.TraceProcessing {
		t.KernelCount = l.rawKernels
	}
	if t.TraceGPUArch == "" || t.TraceGPUArchFrom != cascade.ArchFromMetadata {
		t.TraceGPUArch, t.TraceGPUArchFrom = l.arch, l.archFrom
	}
	t.HeaderArch = ""
	if l.archFrom != cascade.ArchAssumed {
		t.HeaderArch = l.arch
	}
	if t.Prompts == nil {
		t.Prompts = []string{}
	}
	if m := l.meta; m != nil {
		t.Model, t.Layers, t.SourceGPU, t.SuggestedSimConfig = m.Model, m.Layers, m.GPU, m.SuggestedSimConfig
		t.Prompts = m.Prompts
		if t.Prompts == nil {
			t.Prompts = []string{}
		}
		t.TraceGPUArch, t.TraceGPUArchFrom = l.arch, l.archFrom
		if m.TraceGPUArch != nil && *m.TraceGPUArch != "" {
			t.TraceGPUArch, t.TraceGPUArchFrom = *m.TraceGPUArch, cascade.ArchFromMetadata
			if w := archContradicted(*m.TraceGPUArch, l); w != "" {
				t.ScanWarnings = append(t.ScanWarnings, w)
			}
		}
	}
	return c, why
}

// blame names the data file to blame for a change of t's upload: the
// files gone since t's upload was complete, else the one UploadSum names
// (the first listed file missing, else the file modified last).
func (l look) blame(t *cascade.Trace) string {
	if l.lost != "" && l.lostSince == t.UploadSum {
		return l.lost
	}
	return l.which
}

// filesChangedNotes returns the notes of ws that FilesChangedNote starts.
func filesChangedNotes(ws []string) []string {
	var notes []string
	for _, w := range ws {
		if strings.HasPrefix(w, FilesChangedNote) {
			notes = append(notes, w)
		}
	}
	return notes
}

// equalScan reports whether two versions of a trace differ in nothing the
// scanner writes.
func equalScan(a, b cascade.Trace) bool {
	a.UpdatedAt, b.UpdatedAt = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}
