# Sign-up form limits (validation only; the database has its own).
EMAIL_MAX = 255
DISPLAY_NAME_MAX = 80
