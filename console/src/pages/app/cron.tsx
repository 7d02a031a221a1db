import { useState } from 'preact/hooks'
import { api, ok } from '../../api/client'
import type { CronJob, CronJobCreate, CronRun } from '../../api/types'
import { useAction, useInterval, useLoad } from '../../hooks'
import { Badge, Empty, ErrorBox, Loading, Time, shortId } from '../../components/ui'
import { useConfirm } from '../../components/confirm'

const policies = [
  ['forbid', 'Skip the tick while a run is under way'],
  ['replace', 'Cancel the run under way and start'],
  ['allow', 'Start alongside'],
] as const

// The browser's own zone is the likeliest one meant; the API's default is UTC.
function browserZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'
  } catch {
    return 'UTC'
  }
}

// A run in a word or two: "succeeded", "failed (exit 2)", "skipped: overlap".
function RunStatus({ run }: { run: CronRun | null }) {
  if (!run) return <span class="muted">—</span>
  return (
    <>
      <Badge status={run.status} />
      {run.skipReason && <span class="small muted"> {run.skipReason}</span>}
      {run.status === 'failed' && run.exitCode !== null && <span class="small muted"> exit {run.exitCode}</span>}
    </>
  )
}

export function CronJobs({ slug }: { slug: string }) {
  const jobs = useLoad(() => ok(api().GET('/api/apps/{slug}/crons', { params: { path: { slug } } })), [slug])
  const [open, setOpen] = useState<string | null>(null)
  const act = useAction()
  const [confirm, dialog] = useConfirm()
  const runNow = (name: string) =>
    act.run(async () => {
      await ok(api().POST('/api/apps/{slug}/crons/{name}/runs', { params: { path: { slug, name } } }))
      setOpen(name)
      jobs.reload()
    })
  const remove = async (name: string) => {
    const yes = await confirm({
      title: `Remove ${name}?`,
      body: <p>No tick of {name} fires after this.</p>,
      action: `Remove ${name}`,
    })
    if (!yes) return
    act.run(async () => {
      await ok(api().DELETE('/api/apps/{slug}/crons/{name}', { params: { path: { slug, name } } }))
      if (open === name) setOpen(null)
      jobs.reload()
    })
  }
  return (
    <div class="panel">
      {dialog}
      <h2>Cron jobs</h2>
      <p class="muted small">
        Each run starts a fresh sandbox from the live deploy with its environment. Every due tick leaves a run, skipped ones with the
        reason.
      </p>
      <AddCronJob slug={slug} onAdded={jobs.reload} />
      <ErrorBox error={jobs.error ?? act.error} />
      {jobs.loading && !jobs.data && <Loading />}
      {jobs.data && jobs.data.length === 0 && <Empty title="No cron jobs">Add one above, such as a nightly report at 03:00.</Empty>}
      {jobs.data && jobs.data.length > 0 && (
        <table class="table" aria-label="Cron jobs">
          <thead>
            <tr>
              <th>Name</th>
              <th>Schedule</th>
              <th>Next run</th>
              <th>Last run</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {jobs.data.map((j) => (
              <JobRows
                key={j.name}
                slug={slug}
                job={j}
                open={open === j.name}
                busy={act.busy}
                onToggle={() => setOpen(open === j.name ? null : j.name)}
                onRun={() => runNow(j.name)}
                onRemove={() => remove(j.name)}
              />
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}

function JobRows(props: { slug: string; job: CronJob; open: boolean; busy: boolean; onToggle: () => void; onRun: () => void; onRemove: () => void }) {
  const { job: j } = props
  const runsId = `runs-${j.name}`
  return (
    <>
      <tr data-cron={j.name}>
        <td>
          <code>{j.name}</code>
          <div class="small muted">
            <code class="wrap">{j.command}</code>
          </div>
        </td>
        <td>
          <code>{j.schedule}</code>
          <div class="small muted">{j.timezone}</div>
        </td>
        <td>{j.enabled ? <Time at={j.nextRunAt} /> : <span class="muted">disabled</span>}</td>
        <td>
          <RunStatus run={j.lastRun} />
        </td>
        <td class="actions">
          <div class="row">
            <button type="button" class="secondary" disabled={props.busy} onClick={props.onRun}>
              Run now
            </button>
            <button type="button" class="secondary" aria-expanded={props.open} aria-controls={runsId} onClick={props.onToggle}>
              {props.open ? 'Hide runs' : 'Runs'}
            </button>
            <button type="button" class="secondary" disabled={props.busy} onClick={props.onRemove} aria-label={`Remove ${j.name}`}>
              Remove
            </button>
          </div>
        </td>
      </tr>
      {props.open && (
        <tr class="runs-row" id={runsId}>
          <td colSpan={5}>
            <Runs slug={props.slug} name={j.name} />
          </td>
        </tr>
      )}
    </>
  )
}

const unfinished = new Set(['pending', 'running'])

function Runs({ slug, name }: { slug: string; name: string }) {
  const runs = useLoad(() => ok(api().GET('/api/apps/{slug}/crons/{name}/runs', { params: { path: { slug, name }, query: { limit: 20 } } })), [slug, name])
  useInterval(runs.reload, 2000, runs.data?.some((r) => unfinished.has(r.status)) ?? false)
  if (runs.error) return <ErrorBox error={runs.error} />
  if (!runs.data) return <Loading />
  if (runs.data.length === 0) return <p class="muted small">No runs yet.</p>
  return (
    <table class="table" aria-label={`Runs of ${name}`}>
      <thead>
        <tr>
          <th>Run</th>
          <th>For</th>
          <th>Status</th>
          <th>Started</th>
          <th>Finished</th>
        </tr>
      </thead>
      <tbody>
        {runs.data.map((r) => (
          <tr key={r.id} data-run={r.id}>
            <td>
              <code title={`process cron.${name}.${r.id}`}>{shortId(r.id)}</code> <span class="small muted">{r.trigger}</span>
            </td>
            <td>
              <Time at={r.scheduledFor} />
            </td>
            <td>
              <RunStatus run={r} />
            </td>
            <td>
              <Time at={r.startedAt} />
            </td>
            <td>
              <Time at={r.finishedAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function AddCronJob({ slug, onAdded }: { slug: string; onAdded: () => void }) {
  const [name, setName] = useState('')
  const [schedule, setSchedule] = useState('0 3 * * *')
  const [timezone, setTimezone] = useState(browserZone)
  const [command, setCommand] = useState('')
  const [policy, setPolicy] = useState<NonNullable<CronJobCreate['concurrencyPolicy']>>('forbid')
  const add = useAction()
  const submit = (e: Event) => {
    e.preventDefault()
    add.run(async () => {
      const body: CronJobCreate = { name: name.trim(), schedule: schedule.trim(), timezone: timezone.trim() || 'UTC', command, concurrencyPolicy: policy }
      await ok(api().POST('/api/apps/{slug}/crons', { params: { path: { slug } }, body }))
      setName('')
      setCommand('')
      onAdded()
    })
  }
  return (
    <form class="inline-form" onSubmit={submit} aria-label="Add a cron job">
      <div class="field">
        <label for="cron-name">Name</label>
        <input
          id="cron-name"
          required
          pattern="[a-z][a-z0-9\-]{0,29}"
          title="lowercase letters, digits and -, starting with a letter"
          autocomplete="off"
          spellcheck={false}
          placeholder="nightly"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </div>
      <div class="field">
        <label for="cron-schedule">Schedule</label>
        <input id="cron-schedule" required autocomplete="off" spellcheck={false} title="minute hour day-of-month month day-of-week, or @daily" value={schedule} onInput={(e) => setSchedule(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="cron-timezone">Time zone</label>
        <input id="cron-timezone" autocomplete="off" spellcheck={false} placeholder="UTC" value={timezone} onInput={(e) => setTimezone(e.currentTarget.value)} />
      </div>
      <div class="field grow">
        <label for="cron-command">Command</label>
        <input id="cron-command" required autocomplete="off" spellcheck={false} maxLength={4096} placeholder="python3 report.py" value={command} onInput={(e) => setCommand(e.currentTarget.value)} />
      </div>
      <div class="field">
        <label for="cron-policy">While a run is under way</label>
        <select id="cron-policy" value={policy} onChange={(e) => setPolicy(e.currentTarget.value as typeof policy)}>
          {policies.map(([v, label]) => (
            <option key={v} value={v}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <button type="submit" disabled={add.busy}>
        Add cron job
      </button>
      <ErrorBox error={add.error} />
    </form>
  )
}
