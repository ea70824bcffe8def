import type { Messages } from './en.js';

/**
 * The French catalogue of the built-in pages: the same keys and placeholders as the English one
 * (src/ui/messages/en.ts), checked by test/core/messages.test.ts.
 */
export const fr: Messages = {
  titleWithSite: '{title} · {site}',
  thisSite: 'Ce site',

  errorTitle: "Erreur d'autorisation",
  errorHeading: "Cette demande d'autorisation ne peut pas aboutir",
  errorCode: "Code d'erreur : {code}",
  errorDetail: 'Détail technique (en anglais) : {description}',
  errorAdvice: "Revenez à l'application et réessayez, ou contactez son développeur.",

  consentTitle: 'Autoriser {client}',
  consentTitleUnverified: 'Autoriser {client} (non vérifiée)',
  consentHeading: 'Autoriser {client} ?',
  consentHeadingUnverified: 'Autoriser {client} (non vérifiée) ?',
  signedInAs: 'Connecté·e en tant que {name} ({email}).',
  useAnotherAccount: 'Utiliser un autre compte',
  asksTo: 'Cette application demande à :',
  forUseAt: 'Pour utilisation sur :',
  sentTo: 'Après votre choix, vous serez renvoyé·e vers {host}.',
  unverifiedNotice: "{site} n'a pas vérifié cette application : son nom et ses informations sont ce qu'elle dit d'elle-même.",
  clientIdPublishedBy: 'Son identifiant client est publié par {host}.',
  homePage: "Elle indique {uri} comme page d'accueil (non vérifié).",
  authorize: 'Autoriser',
  deny: 'Refuser',
  revokeAnyTime: 'Vous pouvez révoquer cet accès à tout moment.',
  revokeAnyTimeLinked: 'Vous pouvez révoquer cet accès à tout moment dans {link}.',
  authorizedAppsLink: 'vos applications autorisées',
  logoAlt: 'Logo de {site}',

  deviceEntryTitle: 'Connecter un appareil',
  deviceEntryIntro: 'Saisissez le code affiché sur votre appareil (une télévision, un outil en ligne de commande, une autre application).',
  deviceCodeLabel: 'Votre code',
  deviceContinue: 'Continuer',
  deviceWrongCode:
    "Ce code n'est pas valide : il est peut-être mal saisi, expiré ou déjà utilisé. Vérifiez le code affiché sur votre appareil et réessayez.",
  deviceLockedTitle: 'Trop de codes erronés',
  deviceLocked: 'Trop de codes erronés ont été saisis. Réessayez après {time}.',
  deviceConfirmTitle: 'Connecter {client}',
  deviceConfirmTitleUnverified: 'Connecter {client} (non vérifiée)',
  deviceConfirmHeading: 'Connecter {client} ?',
  deviceConfirmHeadingUnverified: 'Connecter {client} (non vérifiée) ?',
  deviceUnverifiedNotice: "{site} n'a pas vérifié cette application : son nom est ce qu'elle dit d'elle-même.",
  deviceCodeShown: 'Votre code : {code}',
  deviceWarning:
    "Ne continuez que si vous avez lancé cette opération sur votre propre appareil et que le code ci-dessus correspond à celui qu'il affiche. Si quelqu'un d'autre vous a envoyé ce code ou ce lien, refusez : il obtiendrait l'accès à votre compte.",
  deviceAsksTo: "L'appareil demande à :",
  deviceApprove: 'Connecter',
  deviceApprovedTitle: 'Appareil connecté',
  deviceApproved: 'Votre appareil est connecté. Vous pouvez y retourner ; il lui faudra peut-être quelques secondes pour continuer.',
  deviceDeniedTitle: 'Appareil non connecté',
  deviceDenied: "Vous avez refusé l'accès. L'appareil n'a pas été connecté.",

  scopes: {
    read: 'Voir votre compte et vos ressources (lecture seule).',
    write: 'Créer, modifier et supprimer des ressources de votre compte.',
    openid: 'Vous connecter avec votre compte (son identifiant).',
    profile: 'Voir votre profil : nom, photo et autres informations publiques.',
    email: 'Voir votre adresse e-mail.',
    address: 'Voir votre adresse postale.',
    phone: 'Voir votre numéro de téléphone.',
  },
  errors: {
    default: "La demande n'a pas pu aboutir.",
    invalid_request: 'Il manque quelque chose à la demande, ou elle est mal formée, ou elle a expiré.',
    invalid_client: "L'application est inconnue ou n'existe plus.",
    invalid_redirect_uri: "L'adresse de retour demandée par l'application n'est pas une de celles qu'elle a enregistrées.",
    invalid_scope: "L'application demande un accès qui n'existe pas.",
    unauthorized_client: "L'application n'a pas le droit de faire ce type de demande.",
    unsupported_response_type: "L'application demande un type de réponse que ce serveur ne donne pas.",
    invalid_target: "L'application demande l'accès à un service que ce serveur ne connaît pas.",
    access_denied: "L'accès a été refusé.",
    server_error: "Le serveur n'a pas pu traiter la demande. Réessayez plus tard.",
    temporarily_unavailable: 'Le serveur est momentanément indisponible. Réessayez plus tard.',
  },
};
