/** Message templates. The rendered body holds the secret, so it exists only in memory, just before the call. */

export const TEMPLATES = ['password_reset'] as const;
export type TemplateName = (typeof TEMPLATES)[number];

export const LOCALES = ['en', 'es', 'fr', 'de'] as const;
export type Locale = (typeof LOCALES)[number];

type Params = Readonly<Record<string, string>>;

const PASSWORD_RESET: Record<Locale, { code: (code: string) => string; url: (url: string) => string }> = {
  en: {
    code: (c) => `Your password reset code is ${c}. If you did not ask for it, ignore this message.`,
    url: (u) => `Reset your password: ${u} If you did not ask for it, ignore this message.`,
  },
  es: {
    code: (c) => `Tu código para restablecer la contraseña es ${c}. Si no lo pediste, ignora este mensaje.`,
    url: (u) => `Restablece tu contraseña: ${u} Si no lo pediste, ignora este mensaje.`,
  },
  fr: {
    code: (c) =>
      `Votre code de réinitialisation est ${c}. Si vous ne l'avez pas demandé, ignorez ce message.`,
    url: (u) => `Réinitialisez votre mot de passe : ${u} Si vous ne l'avez pas demandé, ignorez ce message.`,
  },
  de: {
    code: (c) =>
      `Ihr Code zum Zurücksetzen des Passworts lautet ${c}. Nicht angefordert? Ignorieren Sie diese Nachricht.`,
    url: (u) => `Passwort zurücksetzen: ${u} Nicht angefordert? Ignorieren Sie diese Nachricht.`,
  },
};

/** Renders the SMS body. Params were validated at admission: exactly one of `code` or `reset_url`. */
export function renderBody(template: string, locale: string, params: Params): string {
  if (template !== 'password_reset') throw new Error(`unknown template ${template}`);
  const texts = PASSWORD_RESET[(LOCALES as readonly string[]).includes(locale) ? (locale as Locale) : 'en'];
  if (params.code !== undefined) return texts.code(params.code);
  if (params.reset_url !== undefined) return texts.url(params.reset_url);
  throw new Error('password_reset needs a code or a reset_url');
}

/**
 * What only this command's message carries: the code or the reset URL. Content lookups match it
 * inside a listed body (never the whole body: messaging services may re-encode the text).
 */
export function secretOf(params: Params): string {
  const secret = params.code ?? params.reset_url;
  if (secret === undefined) throw new Error('password_reset needs a code or a reset_url');
  return secret;
}
