package usecase

import (
	"context"
	"fmt"

	"tori.dev/services/apps/internal/env"
)

// RotationReport says what a rotation did.
type RotationReport struct {
	Primary     string // the new primary key id
	Reencrypted int64
}

// RotateKeys is `apps rotate-keys`: a new primary key, then every stored value re-sealed
// under it. Values written meanwhile by a running service under an older key are picked up by the repeated
// passes; a value that changes under a pass is skipped for that pass and seen by the next.
func RotateKeys(ctx context.Context, kr Keyring, st RotationStore) (RotationReport, error) {
	if err := kr.Rotate(ctx); err != nil {
		return RotationReport{}, fmt.Errorf("env: rotate: %w", err)
	}
	primary, err := kr.Primary(ctx)
	if err != nil {
		return RotationReport{}, err
	}
	rep := RotationReport{Primary: primary}
	const pageSize = 200
	for pass := 0; pass < 5; pass++ {
		skipped := false
		afterApp, afterKey := "", ""
		for {
			page, err := st.VarsNotUnder(ctx, primary, afterApp, afterKey, pageSize)
			if err != nil {
				return rep, err
			}
			for _, v := range page {
				ct, id, err := kr.Rewrap(ctx, v.Ciphertext, v.KeyID, env.AAD(v.AppID, v.Key))
				if err != nil {
					return rep, fmt.Errorf("env: re-encrypt %s of app %s: %w", v.Key, v.AppID, err)
				}
				ok, err := st.ReplaceCiphertext(ctx, v, ct, id)
				if err != nil {
					return rep, err
				}
				if ok {
					rep.Reencrypted++
				} else {
					skipped = true
				}
			}
			if len(page) < pageSize {
				break
			}
			last := page[len(page)-1]
			afterApp, afterKey = last.AppID, last.Key
		}
		if !skipped {
			used, err := st.UsedKeys(ctx)
			if err != nil {
				return rep, err
			}
			if len(used) == 0 || (len(used) == 1 && used[primary] > 0) {
				return rep, nil
			}
		}
	}
	return rep, fmt.Errorf("env: values under old keys remain after re-encryption; run rotate-keys again")
}
