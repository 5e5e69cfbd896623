package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cascade-sim/cascade/accelsim"
	"github.com/cascade-sim/cascade/app"
	"github.com/cascade-sim/cascade/postproc"
)

// simSetup is what serve was told about the simulator and the trace format.
type simSetup struct {
	accelSimDir   string   // CASCADE_ACCELSIM_DIR
	traceFormat   string   // CASCADE_TRACE_FORMAT; "" to pick
	simCmdSet     bool     // CASCADE_SIM_CMD or --sim-cmd given
	configsSet    bool     // CASCADE_SIM_CONFIGS_DIR or --sim-configs-dir given
	modifiersSet  bool     // CASCADE_CONFIG_MODIFIERS or --config-modifiers given
	builtInPP     bool     // the post-processor is `cascade postprocess`
	postprocessor []string // CASCADE_POSTPROCESS_CMD, or the cascade binary and "postprocess"
}

// applySimSetup fills in the simulator, its configs and library path from
// an Accel-Sim checkout (CASCADE_SIM_CMD and CASCADE_SIM_CONFIGS_DIR win
// over it), has postproc pick the trace format the built-in
// post-processor writes and its command line, and says in cfg.Report what
// it found, or exactly what is missing.
func applySimSetup(cfg *app.Config, s simSetup) error {
	if s.traceFormat != "" {
		if _, err := postproc.ParseFormat(s.traceFormat); err != nil {
			return fmt.Errorf("%w (CASCADE_TRACE_FORMAT)", err)
		}
	}
	var reads, readsWhy string // what the checkout's simulator reads
	if s.accelSimDir != "" {
		dir, err := filepath.Abs(s.accelSimDir)
		if err != nil {
			return err
		}
		c, err := accelsim.Find(dir)
		if err != nil {
			return fmt.Errorf("%w (CASCADE_ACCELSIM_DIR)", err)
		}
		report := c.Report()
		if c.Above != "" {
			report = append(report, fmt.Sprintf("CASCADE_ACCELSIM_DIR=%s is too deep: set CASCADE_ACCELSIM_DIR=%s, which looks like the checkout", s.accelSimDir, c.Above))
		}
		if c.Binary != "" && !s.simCmdSet {
			cfg.SimCmd = []string{c.Binary}
		} else if s.simCmdSet {
			report = append(report, "CASCADE_SIM_CMD overrides the checkout's simulator: "+strings.Join(cfg.SimCmd, " "))
		}
		if c.GPGPUSimConfigs != "" && c.TraceConfigs != "" && !s.configsSet {
			cfg.SimConfigsDir, cfg.SimTraceConfigsDir = c.GPGPUSimConfigs, c.TraceConfigs
		} else if s.configsSet {
			report = append(report, "CASCADE_SIM_CONFIGS_DIR overrides the checkout's configs: "+cfg.SimConfigsDir)
		}
		if c.Modifiers != "" && !s.modifiersSet {
			cfg.ConfigModifiersFile = c.Modifiers
		}
		if c.LibDir != "" {
			path := c.LibDir
			if old := os.Getenv("LD_LIBRARY_PATH"); old != "" {
				path += string(os.PathListSeparator) + old
			}
			cfg.SimEnv = append(cfg.SimEnv, "LD_LIBRARY_PATH="+path)
		}
		reads, readsWhy = c.Format, "the checkout's simulator "+strings.TrimPrefix(c.FormatWhy, accelsim.TraceParserPath+" ")
		if s.traceFormat != "" && c.Format != "" && s.traceFormat != c.Format {
			report = append(report, fmt.Sprintf("warning: CASCADE_TRACE_FORMAT=%s, but %s: runs will fail with \"Unsupported file type!\"", s.traceFormat, c.FormatWhy))
		}
		for i, l := range report {
			report[i] = "Accel-Sim checkout " + dir + ": " + l
		}
		cfg.Report = append(cfg.Report, report...)
	}
	if !s.builtInPP {
		if s.traceFormat != "" {
			cfg.Report = append(cfg.Report, "CASCADE_TRACE_FORMAT applies to the built-in post-processor only; CASCADE_POSTPROCESS_CMD writes what it writes")
		}
		cfg.PostprocessCmd = s.postprocessor
		return nil
	}
	format, why, err := postproc.ChooseFormat(s.traceFormat, reads, readsWhy)
	if err != nil {
		return err
	}
	cfg.PostprocessCmd, cfg.TraceFormat = postproc.BuiltinCommand(s.postprocessor, format), format
	cfg.Report = append(cfg.Report, fmt.Sprintf("the built-in post-processor writes %s: %s", format, why))
	return nil
}
