package keyring

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	vault "github.com/hashicorp/vault/api"
)

// Vault is a keyring backed by a Vault transit key. The key is derived (derived=true), and
// the associated data is the derivation context: a ciphertext only opens with the context it
// was sealed with, which is what binds it to its app and variable. Ciphertexts are Vault's own
// "vault:v<N>:…" strings; key ids are "vault:<mount>/<key>:<N>".
type Vault struct {
	client *vault.Client
	mount  string
	key    string
	addr   string
}

// VaultConfig names the transit key.
type VaultConfig struct {
	Addr  string
	Token string
	Mount string // e.g. "transit"
	Key   string // e.g. "tori-env"
}

// OpenVault connects to Vault and makes sure the transit key exists and is derived. A
// missing key is created; a key that exists without derivation is refused, because it
// cannot bind ciphertexts to their rows.
func OpenVault(ctx context.Context, cfg VaultConfig) (*Vault, error) {
	vc := vault.DefaultConfig()
	if vc.Error != nil {
		return nil, fmt.Errorf("keyring: vault config: %w", vc.Error)
	}
	vc.Address = cfg.Addr
	client, err := vault.NewClient(vc)
	if err != nil {
		return nil, fmt.Errorf("keyring: vault client: %w", err)
	}
	client.SetToken(cfg.Token)
	v := &Vault{client: client, mount: strings.Trim(cfg.Mount, "/"), key: cfg.Key, addr: cfg.Addr}
	info, err := v.keyInfo(ctx)
	if errors.Is(err, errNoKey) {
		_, err = client.Logical().WriteWithContext(ctx, v.path("keys"), map[string]any{"derived": true, "type": "aes256-gcm96"})
		if err != nil {
			return nil, fmt.Errorf("keyring: create transit key %s: %w", v.keyName(), err)
		}
		info, err = v.keyInfo(ctx)
	}
	if err != nil {
		return nil, err
	}
	if !info.derived {
		return nil, fmt.Errorf("keyring: transit key %s is not derived; create it with derived=true so ciphertexts bind to their rows", v.keyName())
	}
	return v, nil
}

func (v *Vault) String() string { return "Vault transit key " + v.keyName() + " at " + v.addr }

func (v *Vault) keyName() string { return v.mount + "/" + v.key }

func (v *Vault) path(op string) string { return v.mount + "/" + op + "/" + v.key }

var errNoKey = errors.New("keyring: transit key does not exist")

type transitKey struct {
	derived       bool
	latest        int
	minDecryption int
	versions      map[int]bool
}

func (v *Vault) keyInfo(ctx context.Context) (transitKey, error) {
	s, err := v.client.Logical().ReadWithContext(ctx, v.path("keys"))
	if err != nil {
		return transitKey{}, fmt.Errorf("keyring: read transit key %s: %w", v.keyName(), err)
	}
	if s == nil || s.Data == nil {
		return transitKey{}, errNoKey
	}
	k := transitKey{versions: map[int]bool{}}
	k.derived, _ = s.Data["derived"].(bool)
	k.latest = toInt(s.Data["latest_version"])
	k.minDecryption = toInt(s.Data["min_decryption_version"])
	if keys, ok := s.Data["keys"].(map[string]any); ok {
		for ver := range keys {
			if n, err := strconv.Atoi(ver); err == nil {
				k.versions[n] = true
			}
		}
	}
	return k, nil
}

func toInt(x any) int {
	switch n := x.(type) {
	case json.Number:
		i, _ := n.Int64()
		return int(i)
	case float64:
		return int(n)
	case int:
		return n
	}
	return 0
}

func (v *Vault) keyID(version int) string {
	return "vault:" + v.keyName() + ":" + strconv.Itoa(version)
}

// parseKeyID returns the version of a key id of this transit key.
func (v *Vault) parseKeyID(id string) (int, bool) {
	rest, ok := strings.CutPrefix(id, "vault:"+v.keyName()+":")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}

// ciphertextVersion reads N from "vault:vN:…".
func ciphertextVersion(ct string) (int, bool) {
	rest, ok := strings.CutPrefix(ct, "vault:v")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	return n, err == nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// context is the derivation context; Vault requires a non-empty one for a derived key.
func derivationContext(aad []byte) string {
	return b64(append([]byte("tori:"), aad...))
}

func (v *Vault) sealed(s *vault.Secret) ([]byte, string, error) {
	if s == nil || s.Data == nil {
		return nil, "", errors.New("keyring: vault returned no ciphertext")
	}
	ct, _ := s.Data["ciphertext"].(string)
	n, ok := ciphertextVersion(ct)
	if !ok {
		return nil, "", errors.New("keyring: vault returned a malformed ciphertext")
	}
	return []byte(ct), v.keyID(n), nil
}

// Encrypt implements Keyring.
func (v *Vault) Encrypt(ctx context.Context, plaintext, aad []byte) ([]byte, string, error) {
	s, err := v.client.Logical().WriteWithContext(ctx, v.path("encrypt"), map[string]any{
		"plaintext": b64(plaintext),
		"context":   derivationContext(aad),
	})
	if err != nil {
		return nil, "", v.mapErr("encrypt", err)
	}
	return v.sealed(s)
}

// checkPair makes sure the stored key id and the ciphertext's own version agree, so a row
// whose key id was tampered with cannot dodge the start-up check.
func (v *Vault) checkPair(ciphertext []byte, keyID string) error {
	want, ok := v.parseKeyID(keyID)
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownKey, keyID)
	}
	got, ok := ciphertextVersion(string(ciphertext))
	if !ok || got != want {
		return ErrDecrypt
	}
	return nil
}

// Decrypt implements Keyring.
func (v *Vault) Decrypt(ctx context.Context, ciphertext []byte, keyID string, aad []byte) ([]byte, error) {
	if err := v.checkPair(ciphertext, keyID); err != nil {
		return nil, err
	}
	s, err := v.client.Logical().WriteWithContext(ctx, v.path("decrypt"), map[string]any{
		"ciphertext": string(ciphertext),
		"context":    derivationContext(aad),
	})
	if err != nil {
		return nil, v.mapErr("decrypt", err)
	}
	if s == nil || s.Data == nil {
		return nil, errors.New("keyring: vault returned no plaintext")
	}
	p, _ := s.Data["plaintext"].(string)
	out, err := base64.StdEncoding.DecodeString(p)
	if err != nil {
		return nil, errors.New("keyring: vault returned malformed plaintext")
	}
	return out, nil
}

// Rewrap implements Keyring with transit's rewrap: the plaintext never leaves Vault.
func (v *Vault) Rewrap(ctx context.Context, ciphertext []byte, keyID string, aad []byte) ([]byte, string, error) {
	if err := v.checkPair(ciphertext, keyID); err != nil {
		return nil, "", err
	}
	s, err := v.client.Logical().WriteWithContext(ctx, v.path("rewrap"), map[string]any{
		"ciphertext": string(ciphertext),
		"context":    derivationContext(aad),
	})
	if err != nil {
		return nil, "", v.mapErr("rewrap", err)
	}
	// Vault opens the old ciphertext with the context before re-sealing it, so a wrong
	// context fails here just as it does on decrypt.
	return v.sealed(s)
}

// Rotate implements Keyring.
func (v *Vault) Rotate(ctx context.Context) error {
	if _, err := v.client.Logical().WriteWithContext(ctx, v.path("keys")+"/rotate", nil); err != nil {
		return v.mapErr("rotate", err)
	}
	return nil
}

// Primary implements Keyring.
func (v *Vault) Primary(ctx context.Context) (string, error) {
	k, err := v.keyInfo(ctx)
	if err != nil {
		return "", err
	}
	return v.keyID(k.latest), nil
}

// Has implements Keyring: the version must exist and not be below the key's
// min_decryption_version.
func (v *Vault) Has(ctx context.Context, keyID string) (bool, error) {
	n, ok := v.parseKeyID(keyID)
	if !ok {
		return false, nil
	}
	k, err := v.keyInfo(ctx)
	if errors.Is(err, errNoKey) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return k.versions[n] && n >= k.minDecryption && n <= k.latest, nil
}

// mapErr turns Vault's 400 (bad ciphertext, wrong context) into ErrDecrypt. Vault's error
// text never holds the plaintext, so it is safe to keep.
func (v *Vault) mapErr(op string, err error) error {
	var re *vault.ResponseError
	if errors.As(err, &re) && re.StatusCode == http.StatusBadRequest {
		return fmt.Errorf("%w: vault %s: %s", ErrDecrypt, op, strings.Join(re.Errors, "; "))
	}
	return fmt.Errorf("keyring: vault %s: %w", op, err)
}
