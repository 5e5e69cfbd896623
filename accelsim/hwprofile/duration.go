package hwprofile

import "strings"

// DurationStat is the statistic a profile's launch durations are kept
// under (in nanoseconds): the launch's measured time, which a run's
// simulated time is compared with when the trace has no real timing. It
// is no simulator statistic, so it is not in mappings.txt (whose every
// statistic is one); Durations pairs it.
const DurationStat = "duration_ns"

// durationColumns is the column each profiler prints a launch's duration
// in; the Reader converts it to nanoseconds.
var durationColumns = map[Profiler]string{
	NsightCompute: "gpu__time_duration.sum",
	Nvprof:        "Duration",
}

var durations = func() []Pair {
	var lines []string
	for _, p := range []Profiler{NsightCompute, Nvprof} {
		lines = append(lines, DurationStat+" "+string(p)+" all "+durationColumns[p])
	}
	ps, err := ParsePairs(strings.NewReader(strings.Join(lines, "\n")), "durations")
	if err != nil {
		panic(err)
	}
	return ps
}()

// Durations returns the pairs of DurationStat: Nsight Compute's
// gpu__time_duration.sum, nvprof's Duration. Add them to a table
// (Mapping.With) to read launch durations with the counters.
func Durations() []Pair { return append([]Pair(nil), durations...) }

// DurationColumn is the column a profile of p holds launch durations in.
func DurationColumn(p Profiler) string { return durationColumns[p] }
