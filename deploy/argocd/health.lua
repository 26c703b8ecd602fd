-- Argo CD health check for rolloutguard.dev/RolloutGuard (docs/install.md, "Argo CD").
-- Argo CD runs it with the guard as `obj` (gopher-lua, Lua 5.1) and reads the table it returns.
--
-- A guard's health is that of the rollout it judges:
--   Healthy                      -> Healthy
--   Progressing, Suspect         -> Progressing (Suspect: no progress for suspectAfterSeconds, no verdict yet)
--   RollingBack                  -> Progressing (the guard's undo is converging)
--   Stalled, Failed              -> Degraded    (a verdict: the status says whose fault and what to do)
--   RolledBack                   -> Degraded    (the release did not land: the DaemonSet runs the previous
--                                                revision again, which Git does not say)
--   spec.suspend                 -> Suspended
-- A guard the operator has not judged since its spec changed (no status, or status.observedGeneration
-- behind metadata.generation) is Progressing, never a stale Healthy.
local hs = {}
local status = obj.status
local generation = obj.metadata and obj.metadata.generation

if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "spec.suspend is true: the guard judges nothing"
  return hs
end
if status == nil or status.state == nil or status.state == "" then
  hs.status = "Progressing"
  hs.message = "waiting for rollout-guard to judge this guard"
  return hs
end
if generation ~= nil and status.observedGeneration ~= nil and status.observedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "waiting for rollout-guard to observe generation " .. generation
  return hs
end

local byState = {
  Healthy = "Healthy",
  Progressing = "Progressing",
  Suspect = "Progressing",
  RollingBack = "Progressing",
  Stalled = "Degraded",
  Failed = "Degraded",
  RolledBack = "Degraded",
}
hs.status = byState[status.state] or "Unknown"
local message = status.message or ""
if status.state ~= "Healthy" and status.state ~= "Progressing" then
  local parts = { status.state }
  if status.cause ~= nil and status.cause ~= "" then table.insert(parts, "cause " .. status.cause) end
  if status.owner ~= nil and status.owner ~= "" then table.insert(parts, "owner " .. status.owner) end
  message = table.concat(parts, ", ") .. ": " .. message
end
hs.message = message
return hs
