from sqlalchemy import Column, DateTime, ForeignKey, Integer, String
from sqlalchemy.orm import declarative_base

Base = declarative_base()


class User(Base):
    __tablename__ = "users"
    id = Column(Integer, primary_key=True)
    email = Column(String, unique=True)


class LoginSession(Base):
    __tablename__ = "auth_sessions"
    id = Column(String, primary_key=True)
    user_id = Column(Integer, ForeignKey("users.id"))
    expires_at = Column(DateTime)


class AuditEvent(Base):
    __tablename__ = "audit_log"
    id = Column(Integer, primary_key=True)
