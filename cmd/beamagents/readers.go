package main

import (
	"bufio"
	"errors"
	"io"
)

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReader(r) }

func isEOF(err error) bool { return errors.Is(err, io.EOF) }
