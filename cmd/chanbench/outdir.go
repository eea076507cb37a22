package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// outFiles are the files a run writes to the -o directory.
var outFiles = []string{"results.txt", "tables.txt", "sweep.svg"}

// An outDir is the -o directory of one run, which may hold the files of an
// earlier complete run. The run's files are first written to a staging
// directory inside it, made before the sweep starts (which also proves that
// the directory can be created and written to). Then either commit moves
// them into the directory, replacing the earlier run's, or keepPartial
// renames the staging directory to partial-<date>-<time>, beside the
// earlier run's files and never over them; discard removes it.
type outDir struct {
	dir   string
	stage string
}

// stagePrefix names staging directories. A run killed outright (a second
// Ctrl-C, kill -9) leaves one behind, hidden and empty.
const stagePrefix = ".chanbench-run-"

// prepareOut creates dir, with its parents, and a staging directory in it.
func prepareOut(dir string) (*outDir, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	// Not os.MkdirTemp: its 0700 would stay on a partial directory, where
	// os.Mkdir's 0777 less the umask gives what the user's files get.
	for i := 0; ; i++ {
		stage := filepath.Join(dir, fmt.Sprintf("%s%d-%d", stagePrefix, os.Getpid(), i))
		err := os.Mkdir(stage, 0o777)
		if err == nil {
			return &outDir{dir: dir, stage: stage}, nil
		}
		if !errors.Is(err, fs.ErrExist) || i == 100 {
			return nil, fmt.Errorf("cannot write to %s: %w", dir, err)
		}
	}
}

// write writes the files of a run into the staging directory, each filled
// by its function.
func (d *outDir) write(fill map[string]func(io.Writer) error) error {
	for _, name := range outFiles {
		path := filepath.Join(d.stage, name)
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := fill[name](f); err != nil {
			f.Close()
			return fmt.Errorf("writing %s: %v", path, err)
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// commit moves the written files into the directory, over those of an
// earlier run, and removes the staging directory. Each file is replaced
// atomically (a rename within one directory); the set of files is not.
func (d *outDir) commit() error {
	for _, name := range outFiles {
		if err := os.Rename(filepath.Join(d.stage, name), filepath.Join(d.dir, name)); err != nil {
			return err
		}
	}
	return os.Remove(d.stage)
}

// keepPartial renames the staging directory to partial-<date>-<time> (with
// a -2, -3, ... suffix if that is taken) inside the directory, and returns
// its path.
func (d *outDir) keepPartial(now time.Time) (string, error) {
	base := filepath.Join(d.dir, "partial-"+now.Format("20060102-150405"))
	path := base
	for i := 2; ; i++ {
		_, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", err
		}
		path = fmt.Sprintf("%s-%d", base, i)
	}
	if err := os.Rename(d.stage, path); err != nil {
		return "", err
	}
	return path, nil
}

// discard removes the staging directory and whatever was written to it.
func (d *outDir) discard() error { return os.RemoveAll(d.stage) }
