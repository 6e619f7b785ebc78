//go:build tools

// Package tools pins the modules vaultui builds on before their first real
// import lands, so go mod tidy keeps them. Remove a line once real code
// imports that module.
package tools

import (
	_ "github.com/aperturerobotics/jacobsa-crypto/siv"
	_ "github.com/charmbracelet/bubbles/textinput"
	_ "github.com/charmbracelet/bubbletea"
	_ "github.com/charmbracelet/lipgloss"
	_ "github.com/charmbracelet/x/exp/teatest"
	_ "github.com/hanwen/go-fuse/v2/fs"
	_ "github.com/rfjakob/eme"
	_ "github.com/rogpeppe/go-internal/testscript"
	_ "golang.org/x/crypto/chacha20poly1305"
	_ "golang.org/x/crypto/hkdf"
	_ "golang.org/x/crypto/scrypt"
	_ "golang.org/x/sys/cpu"
	_ "golang.org/x/sys/unix"
	_ "golang.org/x/term"
)
