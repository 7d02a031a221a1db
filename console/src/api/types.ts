import type { components, paths } from './schema'

export type Schemas = components['schemas']
export type App = Schemas['App']
export type Deploy = Schemas['Deploy']
export type EnvVar = Schemas['EnvVar']
export type Domain = Schemas['Domain']
export type LogEntry = Schemas['LogEntry']
export type ApiToken = Schemas['ApiToken']
export type Account = Schemas['Account']
export type Plan = Schemas['Plan']
export type BillingState = Schemas['BillingState']
export type Database = Schemas['Database']
export type Dump = Schemas['Dump']
export type ErrorBody = Schemas['Error']
export type FormationEntry = Schemas['FormationEntry']
export type CronJob = Schemas['CronJob']
export type CronJobCreate = Schemas['CronJobCreate']
export type CronRun = Schemas['CronRun']

// Teams (issue #39). Read from the routes rather than named components, so that a rename of a
// schema in the document does not matter while a changed route or field still fails tsc.
type Json<R> = R extends { content: { 'application/json': infer T } } ? T : never
export type Team = Json<paths['/api/teams']['get']['responses'][200]>[number]
export type Member = Json<paths['/api/teams/{team}/members']['get']['responses'][200]>[number]
export type Invitation = Json<paths['/api/teams/{team}/invitations']['get']['responses'][200]>[number]
export type AuditPage = Json<paths['/api/teams/{team}/audit']['get']['responses'][200]>
export type AuditEntry = AuditPage['entries'][number]
export type AuditQuery = NonNullable<paths['/api/teams/{team}/audit']['get']['parameters']['query']>
export type TokenRequest = Json<NonNullable<paths['/api/tokens']['post']['requestBody']>>
export type Role = Member['role']
export const roles: Role[] = ['viewer', 'developer', 'admin', 'owner']
export const scopes = ['read', 'deploy', 'write', 'admin'] as const

// Previews, drains and metrics (issue #40), read from the routes like the teams' types.
export type Preview = Json<paths['/api/apps/{slug}/previews']['get']['responses'][200]>[number]
export type Drain = Json<paths['/api/apps/{slug}/drains']['get']['responses'][200]>[number]
export type DrainCreated = Json<paths['/api/apps/{slug}/drains']['post']['responses'][201]>
export type DrainTest = Json<paths['/api/apps/{slug}/drains/{id}/test']['post']['responses'][200]>
export type Metrics = Json<paths['/api/apps/{slug}/metrics']['get']['responses'][200]>
export type MetricName = NonNullable<NonNullable<paths['/api/apps/{slug}/metrics']['get']['parameters']['query']>['metric']>
