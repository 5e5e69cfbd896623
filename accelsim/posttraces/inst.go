package posttraces

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// The most registers of each kind Accel-Sim's tracer writes of an
// instruction (tracer_tool.cu: the first operand when it is a register;
// common.h's MAX_SRC sources): a line with more is not the tracer's. The
// simulator's parser reads fewer sources (trace_parser.h's MAX_SRC, 4)
// and aborts on a fifth: that is a run's failure, its assertion quoted,
// not the trace's, since another simulator build may read it.
const (
	maxDstRegs = 1
	maxSrcRegs = 5
)

// checkInst checks the fields of an instruction line after its mask, at
// line[i:], as Accel-Sim's parser reads them (trace_parser.cc,
// inst_trace_t::parse_from_string, which reports nothing: a field it
// cannot read leaves it and every later one misread, a register count
// past MAX_DST or MAX_SRC aborts it): dest_num and that many registers,
// the opcode, src_num and that many registers, mem_width, and when it is
// not 0 the address mode and the addresses the mode and mask's active
// lanes make (0: one hex address a lane; 1: a hex base and a stride; 2:
// a hex base and a delta for each lane after the first), then, where imm
// (the tracer version writes one), an immediate. Nothing may follow.
// version is the file's tracer version, for the message. It allocates
// only for an error.
func checkInst(line []byte, i int, mask uint32, imm bool, version int) error {
	i, err := checkRegs(line, i, "dest_num", "destination", maxDstRegs)
	if err != nil {
		return err
	}
	var t []byte
	if t, i = field(line, i); len(t) == 0 {
		return errors.New("the line ends before its opcode")
	}
	if i, err = checkRegs(line, i, "src_num", "source", maxSrcRegs); err != nil {
		return err
	}
	t, i, width, n := decField(line, i)
	switch {
	case len(t) == 0:
		return errors.New("the line ends before its mem_width")
	case n == notNum:
		return fmt.Errorf("mem_width %q is not a number", t)
	case n == bigNum || width > math.MaxUint32:
		return fmt.Errorf("mem_width %s does not fit 32 bits", t)
	}
	if width > 0 {
		if i, err = checkAddrs(line, i, mask); err != nil {
			return err
		}
	}
	if i = skip(line, i); i == len(line) {
		return nil
	}
	if !imm {
		t, _ = field(line, i)
		return fmt.Errorf("%q after the last field: tracer version %d writes no immediate", t, version)
	}
	// %d of a 64-bit immediate, which the parser reads back as 64 bits.
	sign := i
	if line[i] == '-' || line[i] == '+' {
		i++
	}
	if ended(line, i) {
		t, _ = field(line, sign)
		return fmt.Errorf("immediate %q is not an integer", t)
	}
	if t, i, _, n = decField(line, i); n != isNum {
		t, _ = field(line, sign)
		return fmt.Errorf("immediate %q is not an integer", t)
	}
	if t, _ = field(line, i); len(t) > 0 {
		return fmt.Errorf("%q after the immediate", t)
	}
	return nil
}

// checkAddrs checks a memory instruction's address mode and addresses at
// line[i:] and returns the offset after them.
func checkAddrs(line []byte, i int, mask uint32) (int, error) {
	t, i, mode, n := decField(line, i)
	if len(t) == 0 {
		return i, errors.New("the line ends before its address mode")
	}
	if n != isNum || mode > 2 {
		return i, fmt.Errorf("address mode %q is not 0, 1 or 2", t)
	}
	lanes := bits.OnesCount32(mask)
	var ok bool
	if mode == 0 {
		for k := 1; k <= lanes; k++ {
			if t, i, ok = hexField(line, i); len(t) == 0 {
				return i, fmt.Errorf("the line ends before address %d of %d (address mode 0, mask %08x)", k, lanes, mask)
			} else if !ok {
				return i, fmt.Errorf("address %q is not a hex number", t)
			}
		}
		return i, nil
	}
	if t, i, ok = hexField(line, i); len(t) == 0 {
		return i, errors.New("the line ends before its base address")
	} else if !ok {
		return i, fmt.Errorf("base address %q is not a hex number", t)
	}
	if mode == 1 {
		if t, i, ok = intField(line, i, 32); len(t) == 0 {
			return i, errors.New("the line ends before its stride")
		} else if !ok {
			return i, fmt.Errorf("stride %q is not a 32-bit integer", t)
		}
		return i, nil
	}
	// Accel-Sim reads one delta more than the tracer writes, one per
	// active lane: in a line of tracer version 4 or later it takes the
	// immediate for the last delta (which it does not use), in an older
	// one it reads past the end. Either way the addresses are right.
	for k := 1; k < lanes; k++ {
		if t, i, ok = intField(line, i, 64); len(t) == 0 {
			return i, fmt.Errorf("the line ends before delta %d of %d (address mode 2, mask %08x)", k, lanes-1, mask)
		} else if !ok {
			return i, fmt.Errorf("delta %q is not a 64-bit integer", t)
		}
	}
	return i, nil
}

// checkRegs checks a register count, named count, at line[i:] and the
// registers of kind what after it, at most limit, and returns the offset
// after them.
func checkRegs(line []byte, i int, count, what string, limit uint64) (int, error) {
	t, i, regs, n := decField(line, i)
	switch {
	case len(t) == 0:
		return i, fmt.Errorf("the line ends before its %s", count)
	case n == notNum:
		return i, fmt.Errorf("%s %q is not a number", count, t)
	case n == bigNum || regs > limit:
		s := "s"
		if limit == 1 {
			s = ""
		}
		return i, fmt.Errorf("%s %s: Accel-Sim's tracer writes at most %d %s register%s", count, t, limit, what, s)
	}
	var ok bool
	for k := uint64(1); k <= regs; k++ {
		if t, i, ok = regField(line, i); len(t) == 0 {
			return i, fmt.Errorf("the line ends before %s register %d of %d", what, k, regs)
		} else if !ok {
			return i, fmt.Errorf("%s register %q is not R<number>", what, t)
		}
	}
	return i, nil
}
