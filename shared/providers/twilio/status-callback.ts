/** Twilio's status-callback wire format lives with the other message contracts (handlers read it too). */
export * from '../../messages/twilio-status-callback.js';
