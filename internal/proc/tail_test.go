package proc_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cascade-sim/cascade/internal/proc"
)

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

func TestLastLines(t *testing.T) {
	long := strings.Repeat("x", 100<<10)
	many := strings.Repeat("0123456789abcdef\n", 8<<10) // 136 KiB of 17-byte lines
	tests := []struct {
		name, content string
		n             int
		want          []string
	}{
		{"fewer lines than asked", "a\nb\n", 5, []string{"a", "b"}},
		{"last n", "1\n2\n3\n4\n5\n6\n7\n", 3, []string{"5", "6", "7"}},
		{"no final newline", "1\n2\nexit", 2, []string{"2", "exit"}},
		{"trailing blank lines dropped", "1\n2\n\n  \n\n", 2, []string{"1", "2"}},
		{"blank lines inside kept", "1\n\n2\n", 3, []string{"1", "", "2"}},
		{"CRLF", "a\r\nb\r\n", 2, []string{"a", "b"}},
		{"empty file", "", 5, nil},
		{"large file: last lines", many + "tail 1\ntail 2\n", 2, []string{"tail 1", "tail 2"}},
		{"last line longer than the window", "first\n" + long + "\n", 1, []string{long[len(long)-(64<<10)+1:]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log")
			writeFile(t, path, tt.content)
			got, err := proc.LastLines(path, tt.n)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("LastLines = %.80q, %v; want %.80q", got, err, tt.want)
			}
		})
	}
	t.Run("large file: no line cut at the window's start", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "log")
		writeFile(t, path, many)
		got, err := proc.LastLines(path, 1<<20)
		if err != nil || len(got) == 0 {
			t.Fatalf("LastLines = %d lines, %v", len(got), err)
		}
		for i, l := range got {
			if l != "0123456789abcdef" {
				t.Fatalf("line %d of %d is %q", i, len(got), l)
			}
		}
	})
	t.Run("missing file", func(t *testing.T) {
		if _, err := proc.LastLines(filepath.Join(t.TempDir(), "nope"), 5); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	tail := proc.Tail{Path: path}
	next := func(want ...string) {
		t.Helper()
		got, err := tail.Next()
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("Next = %q, %v; want %q", got, err, want)
		}
	}
	next() // no file yet
	writeFile(t, path, "one\ntw")
	next("one")
	if tail.Rest() != "tw" {
		t.Fatalf("Rest = %q", tail.Rest())
	}
	next()
	appendFile(t, path, "o\r\nthree\n")
	next("two", "three")
	if tail.Rest() != "" {
		t.Fatalf("Rest = %q", tail.Rest())
	}
	writeFile(t, path, "rerun\n") // a rerun truncates the log
	next("rerun")
}

func TestTailStartsNearTheEndOfALargeLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	line := strings.Repeat("y", 99) + "\n"
	writeFile(t, path, strings.Repeat(line, 20000)+"last\n") // ~2 MB
	tail := proc.Tail{Path: path}
	got, err := tail.Next()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got); n < 10000 || n > 10500 || got[n-1] != "last" {
		t.Fatalf("%d lines, last %q", n, got[len(got)-1])
	}
	for i, l := range got[:len(got)-1] {
		if l != line[:99] {
			t.Fatalf("line %d is %q: started mid-line", i, l)
		}
	}
}

func TestTailFromStartReadsAllOfALargeLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	line := strings.Repeat("y", 99) + "\n"
	writeFile(t, path, "first\n"+strings.Repeat(line, 20000)+"last\n") // ~2 MB
	tail := proc.Tail{Path: path, FromStart: true}
	var got []string
	for range 10 {
		lines, err := tail.Next()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, lines...)
	}
	if len(got) != 20002 || got[0] != "first" || got[len(got)-1] != "last" {
		t.Fatalf("%d lines, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
}
