package usecase

import "errors"

// ErrUnavailable means paid plans are not enabled: checkout and the billing portal refuse.
var ErrUnavailable = errors.New("billing: paid plans are not enabled")

// ErrAlreadySubscribed means checkout was asked for while the account has a subscription that
// has not ended: plan changes go through the billing portal.
var ErrAlreadySubscribed = errors.New("billing: the account already has a subscription")
