package posttraces

import (
	"context"
	"math/bits"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// classicTrace is the classic golden kernel trace (tracer version 3), with
// its version line set to version ("" leaves it out).
func classicTrace(t *testing.T, version string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/golden/classic/in/kernel-1.trace")
	if err != nil {
		t.Fatal(err)
	}
	repl := ""
	if version != "" {
		repl = "-accelsim tracer version = " + version + "\n"
	}
	return strings.Replace(string(b), "-accelsim tracer version = 3\n", repl, 1)
}

// runLine post-processes the classic trace with line inserted as its line
// 17 (its second instruction line), under the tracer version given.
func runLine(t *testing.T, version, line string) error {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "kernel-1.trace", insertLine(classicTrace(t, version), 17, line))
	writeFile(t, dir, "kernelslist", "kernel-1.trace\n")
	return Run(context.Background(), dir, Options{Jobs: 1, XZ: "-", WorkDir: t.TempDir()})
}

// TestInstructionFieldErrors: an instruction line whose fields after the
// mask Accel-Sim's parser (trace_parser.cc, parse_from_string) would
// misread, or abort on, fails the trace naming the file, the line and
// the field.
func TestInstructionFieldErrors(t *testing.T) {
	const ids = "0 0 0 0 0010 "
	cases := []struct{ version, line, want string }{
		{"3", "ffffffff 1 R1 MOV x 0", `src_num "x" is not a number`},
		{"3", "ffffffff 1 R1 MOV -1 0", `src_num "-1" is not a number`},
		{"3", "ffffffff 2 R1 R2 MOV 0 0", `dest_num 2: Accel-Sim's tracer writes at most 1 destination register`},
		{"3", "ffffffff 99999999999999999999999 R1 MOV 0 0", `dest_num 99999999999999999999999: Accel-Sim's tracer writes at most 1 destination register`},
		{"3", "ffffffff 1 UR4 MOV 0 0", `destination register "UR4" is not R<number>`},
		{"3", "ffffffff 1 R MOV 0 0", `destination register "R" is not R<number>`},
		{"3", "ffffffff 1", `the line ends before destination register 1 of 1`},
		{"3", "ffffffff 0", `the line ends before its opcode`},
		{"3", "ffffffff 0 NOP", `the line ends before its src_num`},
		{"3", "ffffffff 1 R1 MOV 6 R1 R2 R3 R4 R5 R6 0", `src_num 6: Accel-Sim's tracer writes at most 5 source registers`},
		{"3", "ffffffff 1 R1 MOV 2 R1 P0 0", `source register "P0" is not R<number>`},
		{"3", "ffffffff 1 R1 MOV 2 R1 R2", `the line ends before its mem_width`},
		{"3", "ffffffff 1 R1 MOV 2 R1", `the line ends before source register 2 of 2`},
		{"3", "ffffffff 1 R2 LDG.E 1 R4 4x 1 0x7f00 4", `mem_width "4x" is not a number`},
		{"3", "ffffffff 1 R2 LDG.E 1 R4 4", `the line ends before its address mode`},
		{"3", "ffffffff 1 R2 LDG.E 1 R4 4 3 0x7f00 4", `address mode "3" is not 0, 1 or 2`},
		{"3", "ffffffff 1 R2 LDG.E 1 R4 4 z 0x7f00 4", `address mode "z" is not 0, 1 or 2`},
		{"3", "00000003 1 R2 LDG.E 1 R4 4 0 0x7f00", `the line ends before address 2 of 2 (address mode 0, mask 00000003)`},
		{"3", "00000003 1 R2 LDG.E 1 R4 4 0 0x7f00 0xZZ", `address "0xZZ" is not a hex number`},
		{"3", "00000003 1 R2 LDG.E 1 R4 4 0 0x7f00 0x", `address "0x" is not a hex number`},
		{"3", "00000003 1 R2 LDG.E 1 R4 4 0 0x7f00 0x10000000000000000", `address "0x10000000000000000" is not a hex number`},
		{"3", "ffffffff 1 R2 LDG.E 1 R4 4 1 0x7f00", `the line ends before its stride`},
		{"3", "ffffffff 1 R2 LDG.E 1 R4 4 1 0x7f00 4.5", `stride "4.5" is not a 32-bit integer`},
		{"3", "ffffffff 1 R2 LDG.E 1 R4 4 1 0x7f00 2147483648", `stride "2147483648" is not a 32-bit integer`},
		{"3", "ffffffff 1 R2 LDG.E 1 R4 4 1 g7f00 4", `base address "g7f00" is not a hex number`},
		{"3", "0000000f 1 R2 LDG.E 1 R4 4 2 0x7f00 4 8", `the line ends before delta 3 of 3 (address mode 2, mask 0000000f)`},
		{"3", "0000000f 1 R2 LDG.E 1 R4 4 2 0x7f00 4 x 8", `delta "x" is not a 64-bit integer`},
		{"3", "ffffffff 1 R1 MOV 0 0 7", `"7" after the last field: tracer version 3 writes no immediate`},
		{"3", "0000000f 1 R2 LDG.E 1 R4 4 2 0x7f00 4 8 4 4", `"4" after the last field: tracer version 3 writes no immediate`},
		{"3", "00000001 1 R2 LDG.E 1 R4 4 0 0x7f00 0x7f04", `"0x7f04" after the last field: tracer version 3 writes no immediate`},
		{"5", "ffffffff 1 R1 MOV 0 0 x", `immediate "x" is not an integer`},
		{"5", "ffffffff 1 R1 MOV 0 0 7 8", `"8" after the immediate`},
		{"5", "ffffffff 1 R2 LDG.E 1 R4 4 1 0x7f00 4 0 0", `"0" after the immediate`},
	}
	for _, tc := range cases {
		t.Run(tc.line, func(t *testing.T) {
			err := runLine(t, tc.version, ids+tc.line)
			if err == nil {
				t.Fatalf("version %s: %q post-processed", tc.version, tc.line)
			}
			if want := "kernel-1.trace:17: " + tc.want; !strings.HasSuffix(err.Error(), want) {
				t.Errorf("error %q, want one ending %q", err, want)
			}
		})
	}
}

// TestInstructionFieldsAccepted: the instruction lines Accel-Sim's parser
// reads as meant, however spelled, post-process.
func TestInstructionFieldsAccepted(t *testing.T) {
	const ids = "0 0 0 0 0010 "
	cases := []struct{ version, line string }{
		{"3", "ffffffff 1 R1 MOV 0 0 "},                                       // the tracer's trailing space
		{"3", "ffffffff 0 NOP 0 0"},                                           //
		{"3", "ffffffff 01 R255 IMAD 4 R1 R2 R3 R255 00"},                     // 4 sources, leading zeros
		{"3", "ffffffff 1 R1 MOV 0\t0"},                                       // any white space separates, as for istream
		{"3", "00000000 0 STG.E 2 R2 R4 4 1 0x0 0"},                           // predicated off: base 0, stride 0
		{"3", "00000000 0 STG.E 2 R2 R4 4 0"},                                 // no lane, no address
		{"3", "00000000 0 STG.E 2 R2 R4 4 2 0x0"},                             // no lane: base, no delta
		{"3", "00000100 1 R2 LDG.E 1 R4 4 2 0x7f0000000080"},                  // one lane: base, no delta
		{"3", "00000003 1 R2 LDG.E 1 R4 4 0 0x00007f0000000080 7F0000000084"}, // %016lx, and no 0x
		{"3", "0000000f 1 R2 LDG.E 1 R4 4 2 0X7F00 -4 8 +4"},                  // signed deltas
		{"3", "ffffffff 1 R2 LDG.E 1 R4 4 1 0x7f00 -2147483648"},              // the least int stride
		{"3", "ffffffff 1 R2 LDG.E 1 R4 4 1 0xffffffffffffffff 4"},            // the largest address
		{"4", "ffffffff 1 R1 MOV 0 0"},                                        // version 4 before its immediate
		{"4", "ffffffff 1 R1 MOV 0 0 7"},                                      //
		{"5", "ffffffff 1 R1 MOV 0 0 0 "},                                     //
		{"5", "ffffffff 1 R1 MOV 0 0 -1"},                                     // %d of a 64-bit immediate
		{"5", "ffffffff 1 R1 MOV 0 0"},                                        // immediate left out
		{"5", "0000000f 1 R2 LDG.E 1 R4 4 2 0x7f00 4 8 4 16"},                 //
		{"5", "ffffffff 0 LDGSTS.E.BYPASS.128 2 R2 R4 16 1 0x100 16 0"},       //
	}
	for _, tc := range cases {
		t.Run(tc.version+"/"+tc.line, func(t *testing.T) {
			if err := runLine(t, tc.version, ids+tc.line); err != nil {
				t.Fatalf("version %q: %v", tc.version, err)
			}
		})
	}
}

// TestTracerVersionRequired: a kernel trace whose header names no tracer
// version, or one below 3, fails naming the file and its first
// instruction line: Accel-Sim would read its post-processed lines as
// beginning with thread block ids, and misread every instruction (QA: it
// was post-processed, and its runs simulated garbage).
func TestTracerVersionRequired(t *testing.T) {
	for _, c := range []struct{ version, want string }{
		{"", `kernel-1.trace:15: the header has no "-accelsim tracer version = N" line with a number before the first instruction`},
		{"2", `kernel-1.trace:16: -accelsim tracer version = 2: Accel-Sim reads a post-processed trace of tracer version 3 or later only`},
		{"x", `kernel-1.trace:16: the header has no "-accelsim tracer version = N" line`}, // sscanf reads no number: 0
	} {
		err := runLine(t, c.version, "0 0 0 0 0010 ffffffff 1 R1 MOV 0 0")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tracer version %q: %v, want an error with %q", c.version, err, c.want)
		}
	}
	if err := runLine(t, "3", "0 0 0 0 0010 ffffffff 1 R1 MOV 0 0"); err != nil {
		t.Errorf("tracer version 3: %v", err)
	}
}

// refInstOK is checkInst's rules written the obvious way, on
// strings.FieldsFunc and strconv: inst is an instruction line from its PC.
func refInstOK(inst string, imm bool) bool {
	f := strings.FieldsFunc(inst, func(r rune) bool { return r < 256 && fieldSep[r] })
	if len(f) < 2 || len(f[1]) != 8 {
		return false
	}
	mask, err := strconv.ParseUint(f[1], 16, 32)
	if err != nil {
		return false
	}
	f = f[2:]
	next := func() (string, bool) {
		if len(f) == 0 {
			return "", false
		}
		s := f[0]
		f = f[1:]
		return s, true
	}
	count := func(limit uint64) (uint64, bool) {
		s, ok := next()
		n, err := strconv.ParseUint(s, 10, 64)
		return n, ok && err == nil && n <= limit
	}
	hex := func() bool {
		s, ok := next()
		if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
			s = s[2:]
		}
		_, err := strconv.ParseUint(s, 16, 64)
		return ok && err == nil
	}
	signed := func(size int) bool {
		s, ok := next()
		_, err := strconv.ParseInt(s, 10, size)
		return ok && err == nil
	}
	regs := func(limit uint64) bool {
		n, ok := count(limit)
		for ; ok && n > 0; n-- {
			s, more := next()
			_, err := strconv.ParseUint(strings.TrimPrefix(s, "R"), 10, 31)
			ok = more && strings.HasPrefix(s, "R") && err == nil
		}
		return ok
	}
	if !regs(1) {
		return false
	}
	if _, ok := next(); !ok || !regs(5) {
		return false
	}
	s, ok := next()
	width, err := strconv.ParseUint(s, 10, 32)
	if !ok || err != nil {
		return false
	}
	if width > 0 {
		mode, ok := count(2)
		lanes := bits.OnesCount64(mask)
		switch {
		case !ok:
			return false
		case mode == 0:
			for range lanes {
				if !hex() {
					return false
				}
			}
		case mode == 1:
			if !hex() || !signed(32) {
				return false
			}
		default:
			if !hex() {
				return false
			}
			for range max(lanes-1, 0) {
				if !signed(64) {
					return false
				}
			}
		}
	}
	if len(f) == 0 {
		return true
	}
	s = strings.TrimLeft(f[0], "+-")
	if len(f[0])-len(s) > 1 {
		return false
	}
	_, err = strconv.ParseUint(s, 10, 64)
	return imm && len(f) == 1 && err == nil
}

// FuzzCheckInst: checkInst accepts exactly the instruction lines
// refInstOK does, and fastInst only lines it does.
func FuzzCheckInst(f *testing.F) {
	for _, s := range []string{
		"0 0 0 0 0010 ffffffff 1 R1 IMAD.MOV.U32 2 R255 R255 0",
		"0 0 0 0 0010 ffffffff 1 R1 IMAD.MOV.U32 2 R255 R255 0 0",
		"0 0 0 0 0010 0000000f 1 R2 LDG.E 1 R4 4 2 0x7f0000000080 4 8 4",
		"0 0 0 0 0010 0000000f 1 R2 LDG.E 1 R4 4 2 0x7f0000000080 4 8 4 -3",
		"0 0 0 0 0010 00000003 0 STG.E 2 R2 R4 4 0 0x7f0000000100 0x7f0000000104",
		"0 0 0 0 0010 ffffffff 0 LDGSTS.E.BYPASS.128 2 R2 R4 16 1 0x100 16",
		"0 0 0 0 0010 ffffffff 0 LDGSTS.E.BYPASS.128 2 R2 R4 16 1 0x100 -2147483649",
		"0 0 0 0 0010 00000000 0 STG.E 2 R2 R4 4 1 0x0 0 ",
		"0 0 0 0 0010 ffffffff 2 R1 R2 MOV 0 0", "0 0 0 0 0010 ffffffff 0 MOV 5 R1 R2 R3 R4 R5 0",
		"0 0 0 0 0010 ffffffff 1 R1 MOV 0 0\t7 ", "0 0 0 0 0010 ffffffff 1 R1 MOV 0 4 3 0x1 0x2",
		"0 0 0 0 0010 ffffffff 1 R MOV 0 0", "0 0 0 0 0010 ffffffff 1 R2147483648 MOV 0 0 - 5", "0 0 0 0 0010 ffffffff 0 MOV 0 0 18446744073709551616",
		"0 0 0 0 0010 00000001 0 STG 0 4 0 0x00000000000000000000001", "0 0 0 0 0010 00000003 0 STG 0 4 2 0x1 -9223372036854775808 0",
		"0 0 0 0 0010 00000003 0 STG 0 00000000000000000000004 1 0x1 00000000000000000000000000000002147483647",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, imm bool) {
		line := []byte(s)
		var ids lineIDs
		if !parseIDs(line, layoutClassic, &ids) {
			return
		}
		err := checkInst(line, ids.fields, ids.mask, imm, 3)
		want := refInstOK(string(line[ids.rest:]), imm)
		if (err == nil) != want {
			t.Fatalf("%q (immediate %v): checkInst says %v, the reference %v", s, imm, err, want)
		}
		if fastInst(line, ids.fields, ids.mask, imm) && !want {
			t.Fatalf("%q (immediate %v): fastInst takes what the reference refuses", s, imm)
		}
	})
}

// TestCheckInstAllocates: a good line costs no allocation.
func TestCheckInstAllocates(t *testing.T) {
	line := []byte("3 0 0 7 0010 0000000f 1 R2 LDG.E.64 1 R4 8 2 0x7f0000000080 4 -8 4 16")
	var ids lineIDs
	if !parseIDs(line, layoutClassic, &ids) {
		t.Fatal("ids do not parse")
	}
	if n := testing.AllocsPerRun(100, func() {
		if err := checkInst(line, ids.fields, ids.mask, true, 5); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations a line", n)
	}
}

// TestHex32: the mask reads as strconv reads it, and only an 8-digit hex
// one reads.
func TestHex32(t *testing.T) {
	const digits = "0123456789abcdefABCDEFgG /x\x00\xff"
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var b [8]byte
		for k := range b {
			b[k] = digits[r.IntN(len(digits))]
			if r.IntN(4) > 0 {
				b[k] = digits[r.IntN(22)]
			}
		}
		got, ok := hex32(b[:])
		want, err := strconv.ParseUint(string(b[:]), 16, 32)
		if ok != (err == nil) || ok && uint64(got) != want {
			t.Fatalf("hex32(%q) = %x, %v; strconv: %x, %v", b, got, ok, want, err)
		}
	}
	if _, ok := hex32([]byte("ffff")); ok {
		t.Error("a 4-digit mask read")
	}
}
