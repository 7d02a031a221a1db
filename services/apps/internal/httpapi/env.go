package httpapi

import (
	"bytes"
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"tori.dev/services/apps/internal/env"
)

func (h handlers) putEnv(c *fiber.Ctx) error {
	// The app first: an unknown, foreign or deleted app is 404 whatever the body says.
	a, err := h.Apps.Get(c.UserContext(), owner(c), c.Params("slug"))
	if err != nil {
		return err
	}
	body, err := object(c.Body(), false)
	if err != nil {
		return err
	}
	key, ok := optString(body, "key")
	if !ok || key == nil {
		return env.ErrInvalidKey
	}
	value, ok := optString(body, "value")
	if !ok || value == nil {
		return env.ErrInvalidValue
	}
	created, err := h.Env.PutFor(c.UserContext(), a, *key, *value)
	if err != nil {
		return err
	}
	status := fiber.StatusOK
	if created {
		status = fiber.StatusCreated
	}
	return c.Status(status).JSON(envJSON{Key: *key, Value: env.Mask(*value)})
}

func (h handlers) listEnv(c *fiber.Ctx) error {
	vars, err := h.Env.List(c.UserContext(), owner(c), c.Params("slug"))
	if err != nil {
		return err
	}
	out := make([]envJSON, 0, len(vars))
	for _, v := range vars {
		out = append(out, toEnvJSON(v))
	}
	return c.JSON(out)
}

func (h handlers) deleteEnv(c *fiber.Ctx) error {
	if err := h.Env.Delete(c.UserContext(), owner(c), c.Params("slug"), c.Params("key")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// changeEnv sets and removes several variables at once, all or none:
// {"set": {"KEY": "value", …}, "unset": ["KEY", …]}. It answers the app's variables after
// the change, as the list does.
func (h handlers) changeEnv(c *fiber.Ctx) error {
	// The app first: an unknown, foreign or deleted app is 404 whatever the body says.
	a, err := h.Apps.Get(c.UserContext(), owner(c), c.Params("slug"))
	if err != nil {
		return err
	}
	body, err := object(c.Body(), false)
	if err != nil {
		return err
	}
	change, err := envChange(body)
	if err != nil {
		return err
	}
	vars, err := h.Env.ApplyFor(c.UserContext(), a, change)
	if err != nil {
		return err
	}
	out := make([]envJSON, 0, len(vars))
	for _, v := range vars {
		out = append(out, toEnvJSON(v))
	}
	return c.JSON(out)
}

// envChange reads the members of a change. A value that is not a string is an invalid
// value and a name to remove that is not a string an invalid key, as on the single write;
// "set" that is not an object or "unset" that is not an array makes the change invalid.
func envChange(body map[string]json.RawMessage) (env.Change, error) {
	var ch env.Change
	if raw, ok := body["set"]; ok && !isNull(raw) {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(raw, &members); err != nil {
			return ch, env.ErrInvalidChange
		}
		ch.Set = make(map[string]string, len(members))
		for k, v := range members {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return ch, env.ErrInvalidValue
			}
			ch.Set[k] = s
		}
	}
	if raw, ok := body["unset"]; ok && !isNull(raw) {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return ch, env.ErrInvalidChange
		}
		for _, item := range items {
			var k string
			if err := json.Unmarshal(item, &k); err != nil {
				return ch, env.ErrInvalidKey
			}
			ch.Unset = append(ch.Unset, k)
		}
	}
	return ch, nil
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
