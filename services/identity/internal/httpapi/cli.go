package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/callerid"
	"tori.dev/services/identity/internal/auth"
	"tori.dev/services/identity/internal/usecase"
)

var okBody = fiber.Map{"ok": true}

func (h handlers) startDevice(c *fiber.Ctx) error {
	var req struct {
		ClientName string `json:"clientName"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	d, err := h.svc.StartDevice(c.UserContext(), req.ClientName)
	if err != nil {
		return err
	}
	return c.JSON(struct {
		DeviceCode              string `json:"deviceCode"`
		UserCode                string `json:"userCode"`
		VerificationURI         string `json:"verificationUri"`
		VerificationURIComplete string `json:"verificationUriComplete"`
		ExpiresIn               int    `json:"expiresIn"`
		Interval                int    `json:"interval"`
	}{d.DeviceCode, d.UserCode, d.VerificationURI, d.VerificationURIComplete, d.ExpiresIn, d.Interval})
}

type userCodeRequest struct {
	UserCode string `json:"userCode"`
}

func (h handlers) approveDevice(c *fiber.Ctx) error {
	var req userCodeRequest
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	if err := h.svc.ApproveDevice(c.UserContext(), callerid.From(c), req.UserCode); err != nil {
		return err
	}
	return c.JSON(okBody)
}

func (h handlers) denyDevice(c *fiber.Ctx) error {
	var req userCodeRequest
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	if err := h.svc.DenyDevice(c.UserContext(), callerid.From(c), req.UserCode); err != nil {
		return err
	}
	return c.JSON(okBody)
}

func (h handlers) authorize(c *fiber.Ctx) error {
	var req struct {
		RedirectURI         string `json:"redirectUri"`
		State               string `json:"state"`
		CodeChallenge       string `json:"codeChallenge"`
		CodeChallengeMethod string `json:"codeChallengeMethod"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return err
	}
	to, err := h.svc.Authorize(c.UserContext(), callerid.From(c), auth.AuthorizeRequest{
		RedirectURI:         req.RedirectURI,
		State:               req.State,
		CodeChallenge:       req.CodeChallenge,
		CodeChallengeMethod: req.CodeChallengeMethod,
	})
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"redirectTo": to})
}

// token serves both command-line exchanges: {deviceCode} for the device flow, {code,
// codeVerifier, redirectUri} for the loopback flow. A request naming no known code, including
// one too malformed to name any, counts against the caller's address at the gateway.
func (h handlers) token(c *fiber.Ctx) error {
	var req struct {
		DeviceCode   string `json:"deviceCode"`
		Code         string `json:"code"`
		CodeVerifier string `json:"codeVerifier"`
		RedirectURI  string `json:"redirectUri"`
	}
	if err := decode(c.Body(), &req); err != nil {
		return counted(err)
	}
	var out usecase.IssuedToken
	var err error
	switch {
	case req.DeviceCode != "" && req.Code == "":
		out, err = h.svc.ExchangeDeviceCode(c.UserContext(), req.DeviceCode)
	case req.Code != "" && req.DeviceCode == "":
		out, err = h.svc.ExchangeAuthCode(c.UserContext(), req.Code, req.CodeVerifier, req.RedirectURI)
	default:
		err = counted(auth.ErrInvalidRequest)
	}
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"token": out.Token, "tokenId": out.TokenID})
}
