// Folders a folder drop does not even enter (filesFromDrop): never sent (selectSite), often
// large. A module of its own so that the upload code, on the first load, does not pull in the
// rules and their matcher.
export const NEVER_ENTERED = new Set(['.git', '.hg', '.svn'])
