package slurm

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Options are a job's resources and placement, as sbatch's long options
// name them; a zero field leaves the cluster's default. They are every
// job's in [Config], a config folder's over those (see [ReadOptions]),
// and one job's in [Job].
type Options struct {
	Partition string        // --partition
	Account   string        // --account
	QOS       string        // --qos
	TimeLimit time.Duration // --time, whole minutes
	MemoryMB  int64         // --mem, per node
	CPUs      int           // --cpus-per-task
}

// Merge returns o with each field over sets replacing o's.
func (o Options) Merge(over Options) Options {
	if over.Partition != "" {
		o.Partition = over.Partition
	}
	if over.Account != "" {
		o.Account = over.Account
	}
	if over.QOS != "" {
		o.QOS = over.QOS
	}
	if over.TimeLimit != 0 {
		o.TimeLimit = over.TimeLimit
	}
	if over.MemoryMB != 0 {
		o.MemoryMB = over.MemoryMB
	}
	if over.CPUs != 0 {
		o.CPUs = over.CPUs
	}
	return o
}

// Asked says what a job of these options asks sbatch for, as
// cascade-slurm.conf spells it ("partition=long time=90 mem=1024M"), and
// what it leaves to the cluster: "the cluster's defaults" when nothing is
// set, "mem=1024M; the rest the cluster's defaults" when not everything
// is. A run's history records it, so that a job that ran out of memory or
// time shows what it had.
func (o Options) Asked() string {
	var set []string
	for _, f := range o.set() {
		set = append(set, f[0]+"="+f[1])
	}
	switch len(set) {
	case 0:
		return "the cluster's defaults"
	case 6:
		return strings.Join(set, " ")
	}
	return strings.Join(set, " ") + "; the rest the cluster's defaults"
}

// set is the options set, each as sbatch's long option and its value, in
// the order a job script writes them.
func (o Options) set() [][2]string {
	var out [][2]string
	add := func(name, value string) { out = append(out, [2]string{name, value}) }
	if o.Partition != "" {
		add("partition", o.Partition)
	}
	if o.Account != "" {
		add("account", o.Account)
	}
	if o.QOS != "" {
		add("qos", o.QOS)
	}
	if o.TimeLimit > 0 {
		add("time", strconv.FormatInt(int64((o.TimeLimit+time.Minute-1)/time.Minute), 10))
	}
	if o.MemoryMB > 0 {
		add("mem", strconv.FormatInt(o.MemoryMB, 10)+"M")
	}
	if o.CPUs > 0 {
		add("cpus-per-task", strconv.Itoa(o.CPUs))
	}
	return out
}

// ReadOptions reads a file of options, one sbatch long option a line
// without its dashes, and # comments (Cascade's cascade-slurm.conf):
//
//	# SM90_H100 simulates for hours and needs more memory
//	partition=long
//	time=12:00:00
//	mem=16G
//	cpus-per-task=1
//	account=arch
//	qos=normal
//
// Errors name the file, line and option.
func ReadOptions(path string) (Options, error) {
	f, err := os.Open(path)
	if err != nil {
		return Options{}, err
	}
	defer f.Close()
	var o Options
	sc := bufio.NewScanner(f)
	n := 1
	for ; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || v == "" {
			return o, fmt.Errorf("%s:%d: %q is not option=value", path, n, line)
		}
		if err := o.Set(k, v); err != nil {
			return o, fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		// n is the line the scanner stopped in (one over 64 KiB).
		return o, fmt.Errorf("%s:%d: %w", path, n, err)
	}
	return o, nil
}

// Set sets the option named as sbatch's long option (partition, account,
// qos, time, mem, cpus-per-task) from its value as sbatch takes it.
func (o *Options) Set(name, value string) error {
	var err error
	switch strings.TrimPrefix(name, "--") {
	case "partition":
		o.Partition, err = checkName(name, value)
	case "account":
		o.Account, err = checkName(name, value)
	case "qos":
		o.QOS, err = checkName(name, value)
	case "time":
		o.TimeLimit, err = ParseTime(value)
	case "mem":
		o.MemoryMB, err = ParseMemory(value)
	case "cpus-per-task":
		o.CPUs, err = strconv.Atoi(value)
		if err != nil || o.CPUs <= 0 {
			err = fmt.Errorf("want a number of CPUs above 0")
		}
	default:
		return fmt.Errorf("unknown option %q (want partition, account, qos, time, mem or cpus-per-task)", name)
	}
	if err != nil {
		return fmt.Errorf("%s=%s: %w", name, value, err)
	}
	return nil
}

// checkName checks a partition, account or QOS name: it goes on an
// #SBATCH line as it is, so it holds no blank, quote, backslash or
// control character (a carriage return amid a line, say).
func checkName(name, v string) (string, error) {
	if strings.ContainsAny(v, " \t\"'\\") || strings.ContainsFunc(v, unicode.IsControl) {
		return "", fmt.Errorf("not a Slurm %s name", name)
	}
	return v, nil
}

// MaxTime is the longest time limit an option may set: far
// beyond any cluster's, and far from time.Duration's overflow.
const MaxTime = 100 * 365 * 24 * time.Hour

// ParseTime reads a time limit as sbatch's --time takes it (minutes,
// MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS) or as a Go duration ("90m",
// "2h30m"). Slurm counts whole minutes; the job script rounds up.
func ParseTime(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil && strings.ContainsAny(s, "hms") {
		if d <= 0 {
			return 0, fmt.Errorf("want a time limit above 0")
		}
		if d > MaxTime {
			return 0, errTimeTooLong
		}
		return d, nil
	}
	bad := fmt.Errorf("want minutes, [D-]HH:MM:SS or a duration like 90m")
	days := 0
	rest := s
	if d, r, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, bad
		}
		days, rest = n, r
	}
	parts := strings.Split(rest, ":")
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return 0, bad
		}
		nums[i] = n
	}
	var units []time.Duration
	switch {
	case days > 0 || strings.Contains(s, "-"): // D-HH, D-HH:MM, D-HH:MM:SS
		if len(nums) > 3 {
			return 0, bad
		}
		units = []time.Duration{time.Hour, time.Minute, time.Second}[:len(nums)]
		nums, units = append(nums, days), append(units, 24*time.Hour)
	case len(nums) == 1: // minutes
		units = []time.Duration{time.Minute}
	case len(nums) == 2: // MM:SS
		units = []time.Duration{time.Minute, time.Second}
	case len(nums) == 3: // HH:MM:SS
		units = []time.Duration{time.Hour, time.Minute, time.Second}
	default:
		return 0, bad
	}
	// Each term and the sum so far at most MaxTime: no overflow.
	var d time.Duration
	for i, n := range nums {
		if n > int(MaxTime/units[i]) {
			return 0, errTimeTooLong
		}
		if d += time.Duration(n) * units[i]; d > MaxTime {
			return 0, errTimeTooLong
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("want a time limit above 0")
	}
	if d > MaxTime {
		return 0, errTimeTooLong
	}
	return d, nil
}

var errTimeTooLong = fmt.Errorf("want a time limit of at most %d days", MaxTime/(24*time.Hour))

// ParseMemory reads a memory size as sbatch's --mem takes it: megabytes,
// or a number with a K, M, G or T suffix (binary units, as Slurm's).
func ParseMemory(s string) (int64, error) {
	num, unit := s, int64(1)
	if n := len(s); n > 0 {
		switch strings.ToUpper(s[n-1:]) {
		case "K":
			num, unit = s[:n-1], -1024
		case "M":
			num = s[:n-1]
		case "G":
			num, unit = s[:n-1], 1024
		case "T":
			num, unit = s[:n-1], 1024*1024
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("want megabytes, or a size like 512M or 4G")
	}
	if unit < 0 {
		return v/1024 + min(v%1024, 1), nil // KiB, rounded up to whole MB
	}
	if v > math.MaxInt64/unit {
		return 0, fmt.Errorf("want a size below 8 EiB")
	}
	return v * unit, nil
}
