package pooler

import (
	"context"
	"fmt"
	"tori.dev/services/zoneagent/internal/managed"
)

func (d pooledDBFile) login(name string) string {
	if d.Login == "" {
		return name
	}
	return d.Login
}

// Login is who database name's current password logs in as, and that password, when the
// pooler admits it.
func (p *Pooler) Login(name string) (login, password string, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.state.Databases[name]
	return d.login(name), d.Password, ok
}

// Rotate makes login with password database name's current credentials and keeps the ones
// it replaces admitted (until RetireOld), then reloads the running pooler. A login the
// pooler still admitted as the old one is replaced: its earlier password stops here.
// rotation is the command's id (LastRotation).
func (p *Pooler) Rotate(ctx context.Context, name, login, password, rotation string) error {
	if !managed.ValidLogin(name, login) || password == "" {
		return fmt.Errorf("managed: rotate %q: invalid login or password", login)
	}
	return p.change(ctx, name, func(d *pooledDBFile, ok bool) (bool, error) {
		if !ok {
			return false, fmt.Errorf("managed: rotate %s: not admitted", name)
		}
		d.OldLogin, d.OldPassword = d.login(name), d.Password
		d.Login, d.Password, d.Rotation = login, password, rotation
		return true, nil
	})
}

// change applies fn to database name's record (ok: the pooler admits it); when fn changed
// it, the files are written and the running pooler reloads them.
func (p *Pooler) change(ctx context.Context, name string, fn func(d *pooledDBFile, ok bool) (bool, error)) error {
	p.mu.Lock()
	d, ok := p.state.Databases[name]
	changed, err := fn(&d, ok)
	if changed && err == nil {
		p.state.Databases[name] = d
		err = p.writeFiles()
	}
	p.mu.Unlock()
	if !changed || err != nil {
		return err
	}
	return p.reload(ctx)
}

// OldLogin is the login a rotation moved database name from, while the pooler still
// admits it.
func (p *Pooler) OldLogin(name string) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.state.Databases[name]
	return d.OldLogin, d.OldLogin != ""
}

// RetireOld stops admitting database name's old login and reloads the running pooler.
func (p *Pooler) RetireOld(ctx context.Context, name string) error {
	return p.change(ctx, name, func(d *pooledDBFile, ok bool) (bool, error) {
		if !ok || d.OldLogin == "" {
			return false, nil
		}
		d.OldLogin, d.OldPassword = "", ""
		return true, nil
	})
}

// PoolSize is database name's pool size, the plan's connections (0 when not admitted).
func (p *Pooler) PoolSize(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state.Databases[name].PoolSize
}

// LastRotation is the id of the rotate command database name last applied.
func (p *Pooler) LastRotation(name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state.Databases[name].Rotation
}
