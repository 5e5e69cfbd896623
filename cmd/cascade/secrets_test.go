package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelpShowsNoSecrets: serve --help and upload -h print no token, secret
// key or database password taken from the environment (they printed each
// as its flag's default, in clear), and the values still take effect;
// a flag on the command line wins over its variable.
func TestHelpShowsNoSecrets(t *testing.T) {
	secrets := map[string]string{
		"CASCADE_TOKEN":                  "tok-secret-456",
		"CASCADE_READONLY_TOKEN":         "ro-secret-789",
		"CASCADE_S3_ACCESS_KEY":          "AKIAEXAMPLE",
		"CASCADE_S3_SECRET_KEY":          "s3-secret-abc",
		"CASCADE_S3_READONLY_SECRET_KEY": "s3-ro-secret-def",
		"CASCADE_DATABASE_URL":           "postgres://u:pw-secret@h/db",
		"AWS_SECRET_ACCESS_KEY":          "aws-secret-ghi",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	for _, args := range [][]string{{"serve", "--help"}, {"upload", "-h"}} {
		var stdout, stderr bytes.Buffer
		run(context.Background(), args, &stdout, &stderr)
		help := stdout.String() + stderr.String()
		if !strings.Contains(help, "-secret-key") {
			t.Fatalf("%v printed no help:\n%s", args, help)
		}
		for k, v := range secrets {
			if k != "CASCADE_S3_ACCESS_KEY" && strings.Contains(help, v) {
				t.Errorf("%v prints $%s's value", args, k)
			}
		}
	}

	t.Setenv("CASCADE_READONLY_TOKEN", "")
	t.Setenv("CASCADE_S3_READONLY_SECRET_KEY", "")
	cfg, _, _, err := parseServe([]string{"--token", "from-the-flag"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Tokens.ReadWrite != "from-the-flag" || cfg.S3Keys.SecretKey != secrets["CASCADE_S3_SECRET_KEY"] || cfg.DatabaseURL != secrets["CASCADE_DATABASE_URL"] {
		t.Errorf("token %q, S3 secret %q, database %q: want the flag's, then the variables'", cfg.Tokens.ReadWrite, cfg.S3Keys.SecretKey, cfg.DatabaseURL)
	}
	t.Setenv("CASCADE_S3_SECRET_KEY", "")
	opts, err := parseUpload([]string{"./my-trace", "--endpoint", "http://127.0.0.1:7070"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Keys.SecretKey != secrets["AWS_SECRET_ACCESS_KEY"] {
		t.Errorf("upload's secret key %q, want $AWS_SECRET_ACCESS_KEY's", opts.Keys.SecretKey)
	}
}
