package main

import (
	"fmt"

	"mvdan.cc/sh/v3/shell"
)

// splitCommand splits a command line setting (CASCADE_SIM_CMD,
// CASCADE_POSTPROCESS_CMD) into the program and its arguments by POSIX
// shell rules: quotes and backslashes keep spaces in a word, and $VAR and ~
// expand from the server's environment. Nothing is run: a command
// substitution is an error, as is an empty command.
func splitCommand(name, line string) ([]string, error) {
	args, err := shell.Fields(line, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %q: %w", name, line, err)
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("%s: %q names no program", name, line)
	}
	return args, nil
}
