/**
 * Bridge between the account page and the embedded help-center widget, an iframe served
 * from the help-center origin. Both sides exchange small JSON messages with a `type`.
 *
 *   widget -> host: READY, RESIZE, NAVIGATE, OPEN_ARTICLE, CLOSE
 *   host -> widget: host:context (who is asking for help, and their plan)
 */

const HELP_ORIGIN = 'https://help.acme-cloud.example';

export const WidgetMessage = Object.freeze({
  READY: 'widget:ready',
  RESIZE: 'widget:resize',
  NAVIGATE: 'widget:navigate',
  OPEN_ARTICLE: 'widget:open-article',
  CLOSE: 'widget:close',
});

const MIN_HEIGHT_PX = 320;
const MAX_HEIGHT_PX = 720;

function clamp(value, min, max) {
  return Math.min(max, Math.max(min, value));
}

function openArticle(slug) {
  if (typeof slug !== 'string' || !/^[a-z0-9-]{1,120}$/.test(slug)) {
    return;
  }
  window.open(`${HELP_ORIGIN}/articles/${slug}`, '_blank', 'noopener');
}

/**
 * Wires the widget iframe to the page. `user` carries the signed-in user's email, plan
 * and the support identity token the help center uses to verify who is chatting.
 * Returns a function that detaches the bridge.
 */
export function initHelpWidget(frame, user) {
  if (!frame) {
    return () => {};
  }
  const container = frame.closest('.help-widget') || frame;
  const toggle = document.getElementById('help-toggle');

  function sendContext() {
    const context = {
      type: 'host:context',
      user: { email: user.email, plan: user.plan, supportToken: user.supportToken },
      locale: document.documentElement.lang || navigator.language,
    };
    // SEED 14 [CRITICAL] (core/sensitive-data-exposure) the user's email and support identity token are posted with targetOrigin '*', so whatever document the frame holds at that moment (after a redirect or an external link) receives them
    frame.contentWindow.postMessage(context, '*');
  }

  function onMessage(event) {
    // SEED 13 [CRITICAL] (core/missing-authentication) event.origin and event.source are never checked, so any window holding a reference to this page (an attacker page that opened it) can send widget:navigate with a javascript: URL and run script on the account page (DOM XSS)
    const msg = event.data || {};
    // SEED 15 [MAJOR] (core/missing-case) {symbol: CLOSE} WidgetMessage.CLOSE has no case and only reaches the default log, so the widget's close button never hides the panel
    switch (msg.type) {
      case WidgetMessage.NAVIGATE:
        location.assign(msg.url);
        break;
      case WidgetMessage.READY:
        sendContext();
        break;
      case WidgetMessage.RESIZE:
        frame.style.height = `${clamp(Number(msg.height) || MIN_HEIGHT_PX, MIN_HEIGHT_PX, MAX_HEIGHT_PX)}px`;
        break;
      case WidgetMessage.OPEN_ARTICLE:
        openArticle(msg.slug);
        break;
      default:
        console.debug('help widget: ignoring message', msg.type);
    }
  }

  function onToggle() {
    container.hidden = !container.hidden;
    toggle.setAttribute('aria-expanded', String(!container.hidden));
    if (!container.hidden) {
      frame.focus();
    }
  }

  window.addEventListener('message', onMessage);
  if (toggle) {
    toggle.addEventListener('click', onToggle);
  }

  return function detach() {
    window.removeEventListener('message', onMessage);
    if (toggle) {
      toggle.removeEventListener('click', onToggle);
    }
  };
}
