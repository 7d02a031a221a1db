import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'

type Ask = { title: string; body: ComponentChildren; action: string; resolve: (yes: boolean) => void }

// useConfirm asks before something that cannot be undone: confirm({title, body, action})
// opens a modal <dialog> (the browser traps focus in it and closes it on Escape) and answers
// whether the action was chosen; render `dialog` where the component renders.
export function useConfirm(): [(q: Omit<Ask, 'resolve'>) => Promise<boolean>, ComponentChildren] {
  const [ask, setAsk] = useState<Ask | null>(null)
  const confirm = useCallback((q: Omit<Ask, 'resolve'>) => new Promise<boolean>((resolve) => setAsk({ ...q, resolve })), [])
  const close = (yes: boolean) => {
    ask?.resolve(yes)
    setAsk(null)
  }
  return [confirm, ask && <ConfirmDialog ask={ask} onClose={close} />]
}

let ids = 0

function ConfirmDialog({ ask, onClose }: { ask: Ask; onClose: (yes: boolean) => void }) {
  const ref = useRef<HTMLDialogElement>(null)
  const [id] = useState(() => `confirm-${++ids}`)
  useEffect(() => {
    const d = ref.current
    // The element that opened the dialog has focus back when it closes (the browser's own
    // restoring needs close(), not removal).
    const opener = document.activeElement as HTMLElement | null
    d?.showModal()
    return () => {
      if (d?.open) d.close()
      if (opener?.isConnected) opener.focus()
    }
  }, [])
  return (
    <dialog
      ref={ref}
      class="confirm"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-body`}
      onCancel={(e) => {
        e.preventDefault()
        onClose(false)
      }}
    >
      <h2 id={`${id}-title`}>{ask.title}</h2>
      <div id={`${id}-body`}>{ask.body}</div>
      <div class="row">
        {/* Cancel first and focused: Enter on an opened dialog does nothing it cannot undo. */}
        <button type="button" class="secondary" autofocus onClick={() => onClose(false)}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={() => onClose(true)}>
          {ask.action}
        </button>
      </div>
    </dialog>
  )
}
