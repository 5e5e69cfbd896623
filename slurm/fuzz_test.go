package slurm

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

func isJSONError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}

// FuzzParseSlurmOutput: what squeue --json, sacct --json and sbatch
// --parsable print (outside data: a cluster's Slurm, any version, any
// plugin's additions) never panics the parsers. JSON that does not read
// is an error naming the byte it broke at or the field that did not fit;
// what reads are statuses in the states Cascade knows, with an exit code
// of -1 (unknown) or 0…255 and a signal of 0…64. A job id reads only as a
// positive number.
func FuzzParseSlurmOutput(f *testing.F) {
	for _, name := range []string{"squeue-ctld-down.json", "squeue-nodefail.json", "sacct-nodefail.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"jobs": [{"job_id": 7, "job_state": "FAILED", "exit_code": 2560, "start_time": 1, "end_time": 2}], "errors": []}`))
	f.Add([]byte(`{"jobs": [{"job_id": 7, "state": {"current": "FAILED"}, "exit_code": {"return_code": 300, "signal": {"signal_id": 9}}}]}`))
	f.Add([]byte(`{"jobs": [{"job_id": 7, "state": {"current": "FAILED"}, "exit_code": {"return_code": -2}}]}`))
	f.Add([]byte(`{"jobs": [{"job_id": "7"}]}`))
	f.Add([]byte(`{"jobs": [{"job_id": 7, "exit_code": -1, "job_state": "COMPLETED"}]`))
	f.Add([]byte("42;cluster\n"))
	f.Add([]byte("0"))
	position := regexp.MustCompile(`at byte \d+|field \S+`)
	known := map[State]bool{Pending: true, Running: true, Completed: true, Failed: true, Timeout: true, OutOfMemory: true, Cancelled: true, NodeFail: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		for name, parse := range map[string]func([]byte) ([]Status, error){"squeue": parseSqueue, "sacct": parseSacct} {
			sts, err := parse(data)
			if err != nil {
				if len(sts) > 0 {
					t.Fatalf("%s: statuses beside the error %v", name, err)
				}
				if isJSONError(err) && !position.MatchString(err.Error()) {
					t.Fatalf("%s: error %q names no position", name, err)
				}
				continue
			}
			for _, st := range sts {
				if !known[st.State] {
					t.Fatalf("%s: state %q", name, st.State)
				}
				if st.ExitCode < -1 || st.ExitCode > 255 || st.Signal < 0 || st.Signal > 64 {
					t.Fatalf("%s: exit %d, signal %d", name, st.ExitCode, st.Signal)
				}
				st.Describe()
			}
		}
		if id, err := ParseJobID(string(data)); err == nil && id <= 0 {
			t.Fatalf("job id %d from %q", id, data)
		}
	})
}
