package simconfig

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade"
)

// L2 is what a config says of its L2, as the simulator reads its files
// and c's overrides: its capacity in bytes (-gpgpu_cache:dl2's sets ×
// line × ways, one memory sub-partition's, × -gpgpu_n_mem ×
// -gpgpu_n_sub_partition_per_mchannel), and whether it is flushed between
// kernels (-gpgpu_flush_l2_cache 1; GPGPU-Sim's default 0 keeps it). An
// error names the option that cannot be read.
func L2(c cascade.SimConfig) (bytes uint64, flushed bool, err error) {
	opts := options{}
	if err := opts.read(c); err != nil {
		return 0, false, err
	}
	for _, p := range c.Params {
		opts[p.Option] = option{value: p.Value, file: paramSource(p)}
	}
	return opts.l2()
}

func (o options) l2() (bytes uint64, flushed bool, err error) {
	get := func(name string) (string, bool) {
		v, ok := o[name]
		return strings.TrimSpace(v.value), ok
	}
	num := func(name string, def uint64) (uint64, error) {
		v, ok := get(name)
		if !ok {
			if def == 0 {
				return 0, fmt.Errorf("no %s", name)
			}
			return def, nil
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s %q is not a whole number", name, v)
		}
		return n, nil
	}
	if v, ok := get("-gpgpu_flush_l2_cache"); ok {
		flushed = v != "0"
	}
	v, ok := get("-gpgpu_cache:dl2")
	if !ok {
		return 0, flushed, errors.New("no -gpgpu_cache:dl2")
	}
	per, err := cacheBytes(v)
	if err != nil {
		return 0, flushed, fmt.Errorf("-gpgpu_cache:dl2 %q: %w", v, err)
	}
	mem, err := num("-gpgpu_n_mem", 0)
	if err != nil {
		return 0, flushed, err
	}
	sub, err := num("-gpgpu_n_sub_partition_per_mchannel", 1)
	if err != nil {
		return 0, flushed, err
	}
	return per * mem * sub, flushed, nil
}

// l2Bytes is o's L2 capacity, 0 when it cannot be read.
func (o options) l2Bytes() uint64 {
	b, _, err := o.l2()
	if err != nil {
		return 0
	}
	return b
}

// cacheBytes reads a GPGPU-Sim cache config, "[S|N:]<sets>:<line>:<assoc>,...".
func cacheBytes(v string) (uint64, error) {
	head, _, _ := strings.Cut(v, ",")
	parts := strings.Split(head, ":")
	if len(parts) == 4 {
		parts = parts[1:] // the sector (S) or normal (N) cache's letter
	}
	if len(parts) != 3 {
		return 0, errors.New("want [S:]<sets>:<line bytes>:<ways> before the first comma")
	}
	n := uint64(1)
	for i, p := range parts {
		x, err := strconv.ParseUint(p, 10, 32)
		if err != nil || x == 0 {
			return 0, fmt.Errorf("%s %q is not a positive number", []string{"sets", "line size", "ways"}[i], p)
		}
		n *= x
	}
	return n, nil
}
