//go:build !linux

package slurmexec

import "errors"

func fsType(string) (string, fsKind, error) {
	return "", fsUnknown, errors.New("the filesystem type is read on Linux only")
}
