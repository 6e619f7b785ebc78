package app

import (
	"cmp"
	"github.com/vaultui/vaultui/crypto"
	"github.com/vaultui/vaultui/registry"
	"github.com/vaultui/vaultui/vault"
)

// Kind is what a vault is, as front ends list it: its format (a row of vault.Formats) and,
// where the format lets the user choose one, its content cipher.
type Kind struct {
	Format *vault.Format
	Cipher crypto.CipherID
	// Detail names a format that fixes its cipher in full ("Cryptomator vault format 8,
	// SIV_GCM"), from the vault's files; "" otherwise.
	Detail string
}

// Long names the vault's cipher in a sentence: the content cipher, or the format in full.
func (k Kind) Long() string { return cmp.Or(k.Detail, k.Label()) }

// Label names the vault's cipher in a list: the content cipher, or the format's name where
// the format fixes it ("Cryptomator").
func (k Kind) Label() string {
	if k.Format == nil {
		return k.Cipher.String()
	}
	return k.Format.CipherLabel(k.Cipher)
}

// OpensIn says who opens the vault (as one of the default format when its format is unknown).
func (k Kind) OpensIn() vault.Compat {
	return cmp.Or(k.Format, vault.DefaultFormat()).OpensIn(k.Cipher)
}

// OpensIn returns who opens a vault of the default format with content cipher c: what the
// speed test's recommendation weighs.
func OpensIn(c crypto.CipherID) vault.Compat { return vault.DefaultFormat().OpensIn(c) }

// KindOf reads what a registered vault is from its folder (vault.Open): its format, and its
// content cipher from its config. A reverse entry's folder must be prepared for reverse mode.
func KindOf(e registry.Entry) (Kind, error) {
	f, err := openEntry(e)
	if err != nil {
		return Kind{}, err
	}
	i, err := f.Info()
	if err != nil {
		return Kind{}, err
	}
	return Kind{Format: f.Format, Cipher: i.Cipher, Detail: i.Format}, nil
}
