// Command fakepp is a stand-in post-processor for tests. It takes the
// post-processor's command line (<traces dir> -j N) after its own
// --mode=MODE, --delay=D and --record=FILE (which appends the arguments it
// was given, its own included, as one JSON array per line, so that tests
// see the command line it received), and in mode
//
//	ok      writes kernelslist.g from the raw kernel lists (.trace[.xz]
//	        names mapped to .traceg), as the real tool's last step does
//	fail    prints seven numbered lines and exits 3
//	nolist  prints a line and exits 0 without writing kernelslist.g
//	partial writes the first line of kernelslist.g, prints a line and exits 3
//	slow    prints "started", waits --delay (default 1h) then acts as ok;
//	        it ignores nothing, so SIGTERM ends it
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

func main() {
	mode := flag.String("mode", "ok", "ok, fail, nolist, partial or slow")
	delay := flag.Duration("delay", time.Hour, "wait of the slow mode")
	record := flag.String("record", "", "append the arguments, as a JSON array, to this file")
	flag.Parse()
	if *record != "" {
		if err := appendArgs(*record, os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, "fakepp:", err)
			os.Exit(1)
		}
	}
	args := flag.Args()
	// The contract puts the directory before -j; flag stops at it.
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "fakepp: usage: fakepp [--mode M] <traces dir> -j N")
		os.Exit(2)
	}
	dir := args[0]
	switch *mode {
	case "fail":
		for i := 1; i <= 7; i++ {
			fmt.Printf("fakepp line %d\n", i)
		}
		os.Exit(3)
	case "nolist":
		fmt.Println("fakepp: done, but wrote nothing")
		return
	case "partial":
		if err := writeList(dir, 1); err != nil {
			fmt.Fprintln(os.Stderr, "fakepp:", err)
		}
		fmt.Println("fakepp: crashed after one kernel")
		os.Exit(3)
	case "slow":
		fmt.Println("started")
		time.Sleep(*delay)
	}
	if err := writeList(dir, -1); err != nil {
		fmt.Fprintln(os.Stderr, "fakepp:", err)
		os.Exit(1)
	}
	fmt.Println("fakepp: wrote kernelslist.g")
}

// appendArgs appends args as one JSON line: a single write of a file
// opened to append, so concurrent post-processors do not mix their lines.
func appendArgs(path string, args []string) error {
	line, err := json.Marshal(args)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var traceName = regexp.MustCompile(`\.trace(\.xz)?$`)

// writeList writes kernelslist.g from the raw kernel lists: its first n
// lines, or all with n < 0.
func writeList(dir string, n int) error {
	lists, _ := filepath.Glob(filepath.Join(dir, "kernelslist_ctx_*"))
	if _, err := os.Stat(filepath.Join(dir, "kernelslist")); err == nil {
		lists = append(lists, filepath.Join(dir, "kernelslist"))
	}
	sort.Strings(lists)
	if len(lists) == 0 {
		return fmt.Errorf("%s: no kernelslist", dir)
	}
	var out strings.Builder
	for _, l := range lists {
		f, err := os.Open(l)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			out.WriteString(traceName.ReplaceAllString(strings.TrimSpace(sc.Text()), ".traceg") + "\n")
		}
		f.Close()
	}
	text := out.String()
	if n >= 0 {
		lines := strings.SplitAfter(text, "\n")
		text = strings.Join(lines[:min(n, len(lines))], "")
	}
	tmp := filepath.Join(dir, ".kernelslist.g.tmp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "kernelslist.g"))
}
