"""Placeholder until this page is built."""
import streamlit as st

st.title("encoder_decoder")
st.info("This page is being built.")
