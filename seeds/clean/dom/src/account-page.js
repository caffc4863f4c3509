import { api, formatRelative, getPersonalApiKey, messageFor, trackUsage } from './api.js';
import { initHelpWidget } from './help-widget-bridge.js';

const DEFAULT_PREFERENCES = Object.freeze({
  theme: 'system',
  notifications: { email: true, product: false, weeklyDigest: true },
  dashboard: { density: 'comfortable', widgets: ['usage', 'invoices'] },
});

const ACTIVITY_PAGE_SIZE = 20;
const ACTIVITY_REFRESH_MS = 15000;
const MEMBER_SEARCH_DEBOUNCE_MS = 250;
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
// What a shared preferences link may set: display settings only, with the values the form offers.
const SHARED_THEMES = new Set(['system', 'light', 'dark']);
const SHARED_DENSITIES = new Set(['comfortable', 'compact']);

const state = {
  preferences: null,
  activityTimer: null,
  memberSearchTimer: null,
  memberSearchSeq: 0,
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
  for (const key of Object.keys(source)) {
    if (UNSAFE_KEYS.has(key)) {
      continue;
    }
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

/**
 * Display settings shared as a link: /account#prefs=<url-encoded JSON>. Anyone can build
 * such a link, so only the theme and the dashboard density are taken from it, and only with
 * values the form offers; they are shown in the form and kept only if the user saves.
 */
function readSharedPreferences() {
  const match = location.hash.match(/^#prefs=(.+)$/);
  if (!match) {
    return {};
  }
  let shared;
  try {
    shared = JSON.parse(decodeURIComponent(match[1]));
  } catch (err) {
    console.warn('ignoring malformed shared preferences link', err);
    return {};
  }
  const prefs = {};
  if (!isPlainObject(shared)) {
    return prefs;
  }
  if (SHARED_THEMES.has(shared.theme)) {
    prefs.theme = shared.theme;
  }
  if (isPlainObject(shared.dashboard) && SHARED_DENSITIES.has(shared.dashboard.density)) {
    prefs.dashboard = { density: shared.dashboard.density };
  }
  return prefs;
}

async function loadPreferences(form) {
  const saved = await api.get('/me/preferences');
  const prefs = deepMerge(structuredClone(DEFAULT_PREFERENCES), saved || {});
  const shared = readSharedPreferences();
  deepMerge(prefs, shared);
  state.preferences = prefs;
  fillPreferencesForm(form, prefs);
  if (Object.keys(shared).length > 0) {
    setStatus('preferences-status', 'Settings from the shared link are shown below. Save to keep them.');
  }
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
  const target = next ? sameOriginUrl(next) : null;
  if (target) {
    location.assign(target);
  }
}

/** The absolute URL for `candidate` if it stays on this origin, otherwise null. */
function sameOriginUrl(candidate) {
  try {
    const url = new URL(candidate, location.origin);
    return url.origin === location.origin ? url.href : null;
  } catch {
    return null;
  }
}

async function saveProfile(form) {
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  setStatus('profile-status', 'Saving…');
  try {
    const data = new FormData(form);
    await api.put('/me/profile', {
      displayName: String(data.get('displayName')).trim(),
      timezone: data.get('timezone'),
      locale: data.get('locale'),
    });
    setStatus('profile-status', 'Profile saved.');
    trackUsage('profile_saved');
  } finally {
    button.disabled = false;
  }
}

function renderActivity(items) {
  const list = document.getElementById('activity-list');
  list.replaceChildren();
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const li = document.createElement('li');
    li.className = `activity activity--${item.kind}`;
    const actor = document.createElement('span');
    actor.className = 'activity__actor';
    actor.textContent = item.actorName;
    const text = document.createElement('span');
    text.className = 'activity__text';
    text.textContent = item.description;
    const time = document.createElement('time');
    time.dateTime = item.at;
    time.textContent = formatRelative(item.at);
    li.append(actor, ' ', text, ' ', time);
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

function stopActivityRefresh() {
  clearInterval(state.activityTimer);
  state.activityTimer = null;
}

function openActivityPanel() {
  document.getElementById('activity-panel').hidden = false;
  refreshActivity();
  stopActivityRefresh();
  state.activityTimer = setInterval(refreshActivity, ACTIVITY_REFRESH_MS);
}

function closeActivityPanel() {
  document.getElementById('activity-panel').hidden = true;
  stopActivityRefresh();
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
  const status = document.getElementById('owner-status');
  if (!member) {
    status.replaceChildren();
    return;
  }
  const name = document.createElement('strong');
  name.textContent = member.name;
  status.replaceChildren('Selected new owner: ', name, ` (${member.email})`);
}

async function searchMembers(term) {
  const seq = ++state.memberSearchSeq;
  const { members } = await api.get(`/workspace/members?q=${encodeURIComponent(term)}`);
  if (seq !== state.memberSearchSeq) {
    return;
  }
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
    saveProfile(profileForm).catch((err) => setStatus('profile-status', messageFor(err)));
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
