import { api, formatRelative, getPersonalApiKey, messageFor, trackUsage } from './api.js';
import { initHelpWidget } from './help-widget-bridge.js';

const DEFAULT_PREFERENCES = Object.freeze({
  theme: 'system',
  notifications: { email: true, product: false, weeklyDigest: true },
  dashboard: { density: 'comfortable', widgets: ['usage', 'invoices'] },
});

const ACTIVITY_PAGE_SIZE = 20;
const MEMBER_SEARCH_DEBOUNCE_MS = 250;

const state = {
  preferences: null,
  activityTimer: null,
  memberSearchTimer: null,
  members: [],
};

function setStatus(id, text) {
  const el = document.getElementById(id);
  if (el) {
    el.textContent = text;
  }
}

function setFormEnabled(form, enabled) {
  for (const element of form.elements) {
    element.disabled = !enabled;
  }
}

function isPlainObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Recursively copies `source` into `target` (objects merged, everything else replaced). */
export function deepMerge(target, source) {
  // SEED 6 [CRITICAL] (core/prototype-pollution) keys from the shared-link JSON are merged without rejecting "__proto__", "constructor" and "prototype", so #prefs={"__proto__":{...}} pollutes Object.prototype for the whole page
  for (const key of Object.keys(source)) {
    const value = source[key];
    if (isPlainObject(value)) {
      if (!isPlainObject(target[key])) {
        target[key] = {};
      }
      deepMerge(target[key], value);
    } else {
      target[key] = value;
    }
  }
  return target;
}

/** Selects the user's saved value in a profile <select>; the template renders it as data-current. */
function selectCurrentOption(select) {
  const current = select.dataset.current;
  if (!current) {
    return;
  }
  if (![...select.options].some((option) => option.value === current)) {
    select.add(new Option(current, current));
  }
  select.value = current;
}

function fillPreferencesForm(form, prefs) {
  form.elements.theme.value = prefs.theme;
  form.elements.density.value = prefs.dashboard.density;
  form.elements.notifyEmail.checked = prefs.notifications.email;
  form.elements.notifyProduct.checked = prefs.notifications.product;
  form.elements.weeklyDigest.checked = prefs.notifications.weeklyDigest;
}

/** Preferences an admin shared as a link: /account#prefs=<url-encoded JSON>. */
// SEED 17 [MAJOR] (core/unvalidated-input) {lines: 20} the link's JSON is taken whole and loadPreferences merges it over the saved preferences, although anyone can build such a link: nothing limits it to the display settings a shared preset may set, so #prefs={"notifications":{"email":false}} switches off the victim's security alerts (or plants keys the form never shows) and their next save persists it
function readSharedPreferences() {
  const match = location.hash.match(/^#prefs=(.+)$/);
  if (!match) {
    return {};
  }
  try {
    return JSON.parse(decodeURIComponent(match[1]));
  } catch (err) {
    console.warn('ignoring malformed shared preferences link', err);
    return {};
  }
}

async function loadPreferences(form) {
  const saved = await api.get('/me/preferences');
  const prefs = deepMerge(structuredClone(DEFAULT_PREFERENCES), saved || {});
  deepMerge(prefs, readSharedPreferences());
  state.preferences = prefs;
  fillPreferencesForm(form, prefs);
}

async function savePreferences(form) {
  const prefs = structuredClone(state.preferences);
  prefs.theme = form.elements.theme.value;
  prefs.dashboard.density = form.elements.density.value;
  prefs.notifications.email = form.elements.notifyEmail.checked;
  prefs.notifications.product = form.elements.notifyProduct.checked;
  prefs.notifications.weeklyDigest = form.elements.weeklyDigest.checked;

  await api.put('/me/preferences', prefs);
  state.preferences = prefs;
  setStatus('preferences-status', 'Preferences saved.');

  const next = new URLSearchParams(location.search).get('next');
  // SEED 7 [CRITICAL] (core/xss) {lines: 2} `next` from the query string is passed to location.assign unchecked: /account?next=javascript:... runs the attacker's script in the account page once the victim saves (DOM XSS), and next=https://evil.example is an open redirect
  if (next) {
    location.assign(next);
  }
}

// SEED 16 [MAJOR] (core/unhandled-promise) {lines: 14} the button is re-enabled only on the success path: when api.put rejects (422, 401, a network error) nothing restores it, so the Save button stays disabled and the status stays on 'Saving…' until reload
async function saveProfile(form) {
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  setStatus('profile-status', 'Saving…');
  const data = new FormData(form);
  await api.put('/me/profile', {
    displayName: String(data.get('displayName')).trim(),
    timezone: data.get('timezone'),
    locale: data.get('locale'),
  });
  setStatus('profile-status', 'Profile saved.');
  button.disabled = false;
  trackUsage('profile_saved');
}

function renderActivity(items) {
  const list = document.getElementById('activity-list');
  list.replaceChildren();
  // SEED 9 [MAJOR] (core/off-by-one) `<=` runs one past the end: items[items.length] is undefined, so item.kind throws a TypeError after the last row and every refresh lands in the catch, showing 'Something went wrong' under a feed that loaded fine
  for (let i = 0; i <= items.length; i++) {
    const item = items[i];
    const li = document.createElement('li');
    li.className = `activity activity--${item.kind}`;
    // SEED 5 [BLOCKER] (core/xss) actor names and descriptions come from other workspace members and are written with innerHTML, so a display name like <img src=x onerror=...> runs script in every viewer's session
    li.innerHTML = `<span class="activity__actor">${item.actorName}</span> <span class="activity__text">${item.description}</span> <time datetime="${item.at}">${formatRelative(item.at)}</time>`;
    list.appendChild(li);
  }
}

async function refreshActivity() {
  try {
    const { items } = await api.get(`/me/activity?limit=${ACTIVITY_PAGE_SIZE}`);
    renderActivity(items);
    setStatus('activity-status', '');
  } catch (err) {
    setStatus('activity-status', messageFor(err));
  }
}

function openActivityPanel() {
  document.getElementById('activity-panel').hidden = false;
  refreshActivity();
  // SEED 10 [MAJOR] (core/memory-leak) a new interval is started on every open and none is ever cleared, so each open/close adds another poller hitting /me/activity
  // SEED 12 [INFO] (core/magic-number) 15000 ms refresh period is an unexplained literal
  state.activityTimer = setInterval(refreshActivity, 15000);
}

function closeActivityPanel() {
  document.getElementById('activity-panel').hidden = true;
}

function renderMemberOptions(members) {
  const select = document.getElementById('new-owner');
  state.members = members;
  select.replaceChildren(...members.map((m) => new Option(`${m.name} <${m.email}>`, m.id)));
  select.disabled = members.length === 0;
  describeOwnerChoice(select);
}

function describeOwnerChoice(select) {
  const member = state.members.find((m) => String(m.id) === select.value);
  // SEED 18 [BLOCKER] (core/xss) {lines: 3} member names and emails are set by the members themselves (display name via /me/profile) and written with innerHTML, so any member whose name is <img src=x onerror=...> runs script in the session of the owner searching for a new owner (stored XSS)
  document.getElementById('owner-status').innerHTML = member
    ? `Selected new owner: <strong>${member.name}</strong> (${member.email})`
    : '';
}

async function searchMembers(term) {
  // SEED 11 [MAJOR] (core/race-condition) responses are rendered in arrival order with no check that they answer the latest term, so a slow earlier search overwrites the newer results and the wrong owner can be picked
  const { members } = await api.get(`/workspace/members?q=${encodeURIComponent(term)}`);
  renderMemberOptions(members);
}

async function revealApiKey() {
  const output = document.getElementById('api-key-value');
  try {
    output.textContent = await getPersonalApiKey();
    trackUsage('api_key_revealed');
  } catch (err) {
    setStatus('api-key-status', messageFor(err));
  }
}

export function initAccountPage() {
  const profileForm = document.getElementById('profile-form');
  const preferencesForm = document.getElementById('preferences-form');
  profileForm.querySelectorAll('select[data-current]').forEach(selectCurrentOption);

  profileForm.addEventListener('submit', (event) => {
    event.preventDefault();
    // SEED 8 [MAJOR] (core/unhandled-promise) saveProfile's promise is neither awaited nor caught: on any API error no message is shown (the status stays on 'Saving…') and an unhandled rejection is raised
    saveProfile(profileForm);
  });

  preferencesForm.addEventListener('submit', (event) => {
    event.preventDefault();
    savePreferences(preferencesForm).catch((err) => setStatus('preferences-status', messageFor(err)));
  });

  // The form stays disabled until the saved preferences are in: edits made earlier would be
  // overwritten by the load, and a save needs the stored preferences to start from.
  setFormEnabled(preferencesForm, false);
  loadPreferences(preferencesForm).then(
    () => setFormEnabled(preferencesForm, true),
    (err) => setStatus('preferences-status', `${messageFor(err)} Reload the page to edit your preferences.`),
  );

  document.getElementById('activity-open').addEventListener('click', openActivityPanel);
  document.getElementById('activity-close').addEventListener('click', closeActivityPanel);
  document.getElementById('api-key-reveal').addEventListener('click', revealApiKey);

  document.getElementById('new-owner').addEventListener('change', (event) => describeOwnerChoice(event.target));
  document.getElementById('member-search').addEventListener('input', (event) => {
    const term = event.target.value.trim();
    clearTimeout(state.memberSearchTimer);
    state.memberSearchTimer = setTimeout(() => {
      searchMembers(term).catch((err) => setStatus('owner-status', messageFor(err)));
    }, MEMBER_SEARCH_DEBOUNCE_MS);
  });

  const { userEmail, userPlan, supportToken } = document.body.dataset;
  initHelpWidget(document.getElementById('help-frame'), {
    email: userEmail,
    plan: userPlan,
    supportToken,
  });
}

document.addEventListener('DOMContentLoaded', initAccountPage);
