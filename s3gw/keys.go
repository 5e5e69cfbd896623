package s3gw

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cascade-sim/cascade"
)

// Keys is the access key pair every request must be signed with.
type Keys = cascade.S3Keys

// Variable names in a key file, the same as the environment's.
const (
	accessKeyVar = "CASCADE_S3_ACCESS_KEY"
	secretKeyVar = "CASCADE_S3_SECRET_KEY"
)

// LoadOrCreateKeys reads the key pair from path, a file of
// CASCADE_S3_ACCESS_KEY=... and CASCADE_S3_SECRET_KEY=... lines (the shell
// can source it). When the file does not exist it generates a random pair
// and writes it there, readable by its owner only, and created reports
// true.
func LoadOrCreateKeys(path string) (k Keys, created bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		k, err = generateKeys()
		if err != nil {
			return k, false, err
		}
		if err := writeKeys(path, k); err != nil {
			return k, false, err
		}
		return k, true, nil
	}
	if err != nil {
		return k, false, err
	}
	k, err = parseKeys(data)
	if err != nil {
		return k, false, fmt.Errorf("%s: %w", path, err)
	}
	return k, false, nil
}

func parseKeys(data []byte) (Keys, error) {
	var k Keys
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			return k, fmt.Errorf("line %d: want NAME=value", n)
		}
		value = strings.Trim(strings.TrimSpace(value), `'"`)
		switch strings.TrimSpace(name) {
		case accessKeyVar:
			k.AccessKey = value
		case secretKeyVar:
			k.SecretKey = value
		default:
			return k, fmt.Errorf("line %d: unknown name %q; want %s or %s", n, name, accessKeyVar, secretKeyVar)
		}
	}
	if k.AccessKey == "" || k.SecretKey == "" {
		return k, fmt.Errorf("want both %s and %s", accessKeyVar, secretKeyVar)
	}
	return k, nil
}

// generateKeys makes a pair shaped like AWS's: a 20-character access key
// and a 40-character secret, from crypto/rand.
func generateKeys() (Keys, error) {
	const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	const mixed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	pick := func(alphabet string, n int) (string, error) {
		b := make([]byte, n)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		for i := range b {
			b[i] = alphabet[int(b[i])%len(alphabet)]
		}
		return string(b), nil
	}
	access, err := pick(upper, 16)
	if err != nil {
		return Keys{}, err
	}
	secret, err := pick(mixed, 40)
	if err != nil {
		return Keys{}, err
	}
	return Keys{AccessKey: "CASC" + access, SecretKey: secret}, nil
}

func writeKeys(path string, k Keys) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	body := fmt.Sprintf("# Cascade's S3 endpoint key pair, made at first start; delete this file for a new one.\n%s=%s\n%s=%s\n",
		accessKeyVar, k.AccessKey, secretKeyVar, k.SecretKey)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(body)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
