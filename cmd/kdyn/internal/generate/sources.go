package generate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/util/validation"
)

// This file reads --from-literal, --from-file and --from-env-file the way
// kubectl does, with its messages.

// parseLiteralSource splits "key=value" at the first "=" (the value may
// hold more).
func parseLiteralSource(source string) (key, value string, err error) {
	key, value, ok := strings.Cut(source, "=")
	if !ok || key == "" {
		return "", "", fmt.Errorf("invalid literal source %v, expected key=value", source)
	}
	return key, value, nil
}

// parseFileSource splits "[key=]path": without a key, the key is the
// path's base name.
func parseFileSource(source string) (key, file string, err error) {
	switch n := strings.Count(source, "="); {
	case n == 0:
		return path.Base(filepath.ToSlash(source)), source, nil
	case n == 1 && strings.HasPrefix(source, "="):
		return "", "", fmt.Errorf("key name for file path %v missing", strings.TrimPrefix(source, "="))
	case n == 1 && strings.HasSuffix(source, "="):
		return "", "", fmt.Errorf("file path for key name %v missing", strings.TrimSuffix(source, "="))
	case n > 1:
		return "", "", errors.New("key names or file paths cannot contain '='")
	}
	key, file, _ = strings.Cut(source, "=")
	return key, file, nil
}

// readFileSources calls add for each --from-file source: a file under its
// key, or every regular file of a directory under its own name (a key
// cannot be given for a directory; subdirectories, links and devices are
// skipped).
func readFileSources(sources []string, add func(key string, data []byte) error) error {
	for _, source := range sources {
		key, file, err := parseFileSource(source)
		if err != nil {
			return err
		}
		info, err := os.Stat(file)
		if err != nil {
			return statError(file, err)
		}
		if !info.IsDir() {
			data, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			if err := add(key, data); err != nil {
				return err
			}
			continue
		}
		if strings.Contains(source, "=") {
			return errors.New("cannot give a key name for a directory path")
		}
		entries, err := os.ReadDir(file)
		if err != nil {
			return fmt.Errorf("error listing files in %s: %v", file, err)
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			data, err := os.ReadFile(filepath.Join(file, e.Name()))
			if err != nil {
				return err
			}
			if err := add(e.Name(), data); err != nil {
				return err
			}
		}
	}
	return nil
}

// statError words a failed stat as kubectl does ("error reading x: no such
// file or directory").
func statError(file string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("error reading %s: %v", file, pe.Err)
	}
	return fmt.Errorf("error reading %s: %v", file, err)
}

// utf8BOM is dropped from the start of an env file.
var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readEnvFiles calls add for each KEY=VALUE line of the --from-env-file
// files: blank lines and lines starting with # are skipped, leading blanks
// dropped, and a line with no "=" takes the value of that environment
// variable. Keys must be valid environment variable names.
func readEnvFiles(files []string, what string, add func(key, value string) error) error {
	for _, file := range files {
		info, err := os.Stat(file)
		if err != nil {
			return statError(file, err)
		}
		if info.IsDir() {
			return fmt.Errorf("env %s file cannot be a directory", what)
		}
		if err := readEnvFile(file, add); err != nil {
			return err
		}
	}
	return nil
}

func readEnvFile(file string, add func(key, value string) error) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for n := 0; s.Scan(); n++ {
		line := s.Bytes()
		if !utf8.Valid(line) {
			return fmt.Errorf("env file %s contains invalid utf8 bytes at line %d: %v", file, n+1, line)
		}
		if n == 0 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		line = bytes.TrimLeftFunc(line, unicode.IsSpace)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		key, value, ok := strings.Cut(string(line), "=")
		if errs := validation.IsEnvVarName(key); len(errs) != 0 {
			return fmt.Errorf("%q is not a valid key name: %s", key, strings.Join(errs, ";"))
		}
		if !ok {
			value = os.Getenv(key)
		}
		if err := add(key, value); err != nil {
			return err
		}
	}
	return s.Err()
}
