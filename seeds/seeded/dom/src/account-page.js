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
};

function setStatus(id, text) {
  const el = document.getElementById(id);
  if (el) {
    el.textContent = text;
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

/** Preferences an admin shared as a link: /account#prefs=<url-encoded JSON>. */
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

function fillPreferencesForm(form, prefs) {
  form.elements.theme.value = prefs.theme;
  form.elements.density.value = prefs.dashboard.density;
  form.elements.notifyEmail.checked = prefs.notifications.email;
  form.elements.notifyProduct.checked = prefs.notifications.product;
  form.elements.weeklyDigest.checked = prefs.notifications.weeklyDigest;
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
  // SEED 7 [CRITICAL] (core/open-redirect) `next` from the query string is followed without checking that it stays on this site, so /account?next=https://evil.example sends the user to a phishing page
  if (next) {
    location.assign(next);
  }
}

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
  // SEED 9 [MAJOR] (core/off-by-one) `<=` runs one past the end: items[items.length] is undefined, item.kind throws a TypeError and the feed is left empty
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
  select.replaceChildren(...members.map((m) => new Option(`${m.name} <${m.email}>`, m.id)));
  select.disabled = members.length === 0;
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

  profileForm.addEventListener('submit', (event) => {
    event.preventDefault();
    // SEED 8 [MAJOR] (core/unhandled-promise) saveProfile's rejection is neither awaited nor caught: on any API error the submit button stays disabled, no message is shown and an unhandled rejection is raised
    saveProfile(profileForm);
  });

  preferencesForm.addEventListener('submit', (event) => {
    event.preventDefault();
    savePreferences(preferencesForm).catch((err) => setStatus('preferences-status', messageFor(err)));
  });

  loadPreferences(preferencesForm).catch((err) => setStatus('preferences-status', messageFor(err)));

  document.getElementById('activity-open').addEventListener('click', openActivityPanel);
  document.getElementById('activity-close').addEventListener('click', closeActivityPanel);
  document.getElementById('api-key-reveal').addEventListener('click', revealApiKey);

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
